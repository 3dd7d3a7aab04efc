package cli

import (
	"strconv"
	"testing"
)

// TestIndexedEnvAgrees: an Env looked up by name answers as the scan of its
// pairs does: the last assignment wins, an empty value is set, a pair
// without "=" is no variable.
func TestIndexedEnvAgrees(t *testing.T) {
	e := Env{Environ: []string{"A=1", "B=", "A=2", "NOEQ", "C=x=y", "=hidden"}}
	ix := e.indexed()
	for _, k := range []string{"A", "B", "C", "NOEQ", "D", "", "a"} {
		v1, ok1 := e.LookupEnv(k)
		v2, ok2 := ix.LookupEnv(k)
		if v1 != v2 || ok1 != ok2 {
			t.Errorf("%q: scan %q %v, index %q %v", k, v1, ok1, v2, ok2)
		}
	}
	if v := ix.Getenv("A"); v != "2" {
		t.Errorf("A = %q, want the last assignment, 2", v)
	}
	if _, ok := ix.LookupEnv("B"); !ok {
		t.Error("B is set, to the empty string")
	}
}

func BenchmarkGetenv(b *testing.B) {
	var environ []string
	for i := range 60 { // a shell's environment
		environ = append(environ, "VAR_"+strconv.Itoa(i)+"=value")
	}
	for _, e := range []struct {
		name string
		env  Env
	}{{"scan", Env{Environ: environ}}, {"indexed", Env{Environ: environ}.indexed()}} {
		b.Run(e.name, func(b *testing.B) {
			for b.Loop() {
				e.env.Getenv("TOKEN_1")
			}
		})
	}
}

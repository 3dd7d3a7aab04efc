package policy

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// benchFacts includes a RealPath that really asks the file system, as the
// guard's does.
func benchFacts(b *testing.B) Facts {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "src/internal/server"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src/internal/server/handler.go"), nil, 0o600); err != nil {
		b.Fatal(err)
	}
	return Facts{
		Home: dir, Cwd: dir, ProjectRoot: dir, Session: NewSessionState(),
		RealPath: func(p string) (string, bool) {
			r, err := filepath.EvalSymlinks(p)
			return r, err == nil
		},
	}
}

func BenchmarkDecideRead(b *testing.B) {
	p := mustMerge(b, "", "")
	f := benchFacts(b)
	c := call("read", "path", "src/internal/server/handler.go", "offset", 10.0, "limit", 200.0)
	b.ReportAllocs()
	for b.Loop() {
		if d := p.Decide(c, f); d.Action != ActionAllow {
			b.Fatal(d)
		}
	}
}

func BenchmarkDecideBash(b *testing.B) {
	p := mustMerge(b, "", "")
	f := benchFacts(b)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		// a new line each time, as an agent's are (shell.Parse keeps the
		// last few)
		n++
		c := call("bash", "command", `cd src && go test ./... 2>&1 | grep -v "^ok" | head -n `+strconv.Itoa(n))
		if d := p.Decide(c, f); d.Action == ActionBlock {
			b.Fatal(d)
		}
	}
}

func BenchmarkRedactGrep(b *testing.B) {
	p := mustMerge(b, "", "")
	f := benchFacts(b)
	c := call("grep", "pattern", "TODO")
	var content string
	for i := range 200 {
		content += "src/pkg/file" + itoa(i) + ".go:" + itoa(i) + ": // TODO: something to do here\n"
	}
	b.ReportAllocs()
	for b.Loop() {
		p.Redact(c, content, f)
	}
}

package testenv

import (
	"testing"
	"time"
)

func TestSlow(t *testing.T) {
	for _, c := range []struct {
		env  string
		want time.Duration
	}{
		{"", time.Second},
		{"1", time.Second},
		{"2.5", 2500 * time.Millisecond},
		{"0.5", time.Second},
		{"abc", time.Second},
		{"1000", time.Second},
	} {
		t.Setenv("PIAGENT_TEST_SLOW", c.env)
		if got := Slow(time.Second); got != c.want {
			t.Errorf("PIAGENT_TEST_SLOW=%q: Slow(1s) = %v, want %v", c.env, got, c.want)
		}
	}
}

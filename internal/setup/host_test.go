package setup

import (
	"testing"
)

func TestAdapterIn(t *testing.T) {
	t.Parallel()
	if l, n := AdapterIn([]string{"--no-extensions", "-e", "/x/piagent/index.ts", "-e", "/n/pi-mcp-adapter/index.ts", "-p", "hi"}); !l || !n {
		t.Errorf("got %v %v", l, n)
	}
	if l, n := AdapterIn([]string{"-p", "pi-mcp-adapter"}); l || n {
		t.Errorf("a prompt naming the adapter: %v %v", l, n)
	}
}

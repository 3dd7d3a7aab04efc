package engine

import (
	"slices"
	"testing"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/sandbox"
	"github.com/piagent/piagent/internal/serverrun"
)

// TestStoppedNotice: the one owner of the notice for a server the sandbox
// stopped names each server, not disabled, whose last run failed, with the
// record's own words and fix; a run that exited, was stopped by a signal or
// left no record is no failure.
func TestStoppedNotice(t *testing.T) {
	t.Parallel()
	home, proj := t.TempDir(), "/work/p"
	dir := func(name string) string {
		return sandbox.ServerStateDir(sandbox.Input{Home: home, Project: proj}, name)
	}
	denied := &serverrun.Denied{Path: "/home/u/notes/a.txt", Access: "write"}
	for name, r := range map[string]serverrun.Record{
		"failed":   {Server: "failed", Project: proj, State: serverrun.Failed, Code: 1, Denied: denied, Line: "EACCES"},
		"off":      {Server: "off", Project: proj, State: serverrun.Failed, Code: 1},
		"exited":   {Server: "exited", Project: proj, State: serverrun.Exited},
		"signal":   {Server: "signal", Project: proj, State: serverrun.Stopped},
		"my% name": {Server: "my% name", Project: proj, State: serverrun.Failed, Code: 2},
	} {
		if err := serverrun.Write(dir(name), r); err != nil {
			t.Fatal(err)
		}
	}
	g := &gate.Gate{Project: proj, Servers: []gate.Server{
		{Name: "failed", State: gate.Ready}, {Name: "off", State: gate.Disabled}, {Name: "exited", State: gate.Ready},
		{Name: "signal", State: gate.Ready}, {Name: "none", State: gate.Ready}, {Name: "my% name", State: gate.Ready},
	}}
	got := StoppedNotice(home, g, "piagent mcp")
	var want []string
	for _, name := range []string{"failed", "my% name"} {
		r, d, ok := LastFailure(home, proj, name)
		if !ok || d != dir(name) {
			t.Fatalf("LastFailure(%s) = %v, %s", name, ok, d)
		}
		want = append(want, r.Notice("piagent mcp", d))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("StoppedNotice =\n%q\nwant\n%q", got, want)
	}
	if w := "piagent: MCP server failed ended under the sandbox with status 1 (): the sandbox refused to let it write /home/u/notes/a.txt; fix: piagent mcp grant failed --write /home/u/notes"; got[0] != w {
		t.Errorf("the notice's first line is %q, want %q", got[0], w)
	}
	for _, name := range []string{"off", "exited", "signal", "none"} {
		if _, _, ok := LastFailure(home, proj, name); ok && name != "off" {
			t.Errorf("LastFailure(%s) is a failure", name)
		}
	}
}

package cli

import (
	"testing"

	"github.com/piagent/piagent/internal/ops"
)

func TestCommandLine(t *testing.T) {
	t.Parallel()
	a := &app{name: "piagent-mcp"}
	req, err := ops.ParseAdd([]string{"gh", "npx", "-y", "@acme/gh mcp", "it's"}, 1, "", []string{"Z=1", "A=${A}"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := a.commandLine(req, ops.ScopeFile{Scope: "project", Repository: true}, "/work/my proj", true)
	want := `piagent-mcp add gh --scope project --project '/work/my proj' --replace --env Z=1 --env 'A=${A}' -- npx -y '@acme/gh mcp' 'it'\''s'`
	if got != want {
		t.Errorf("commandLine =\n%s\nwant\n%s", got, want)
	}
	req, _ = ops.ParseAdd([]string{"s"}, -1, "https://x.example/mcp", nil, []string{"Authorization: Bearer ${T}"})
	a.name = "piagent"
	got = a.commandLine(req, ops.ScopeFile{Scope: "global"}, "/p", false)
	if want := `piagent mcp add s --scope global --header 'Authorization: Bearer ${T}' --url https://x.example/mcp`; got != want {
		t.Errorf("commandLine =\n%s\nwant\n%s", got, want)
	}
}

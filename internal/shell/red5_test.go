package shell

import (
	"slices"
	"testing"
)

// TestRed5PsShowsEnvironments: ps's BSD option e prints each process's
// environment after its command: `ps eww` is `cat /proc/*/environ`, which
// the policy refuses (Pi's own environment holds its API keys), yet it ran
// as an ordinary listing. -e (every process), -o user and the usual
// listings stay allowed.
func TestRed5PsShowsEnvironments(t *testing.T) {
	t.Parallel()
	for _, src := range []string{"ps e", "ps eww", "ps auxe", "ps axeww", "ps -ww e", "ps aux e", "ps ewwp 1234", "/bin/ps e", "ps o pid,cmd e"} {
		if got := rules(classify(t, src, testCtx)); !slices.Contains(got, "ps-environ:block") {
			t.Errorf("%s: %v, want ps-environ:block", src, got)
		}
	}
	for _, src := range []string{"ps aux", "ps -ef", "ps -e", "ps -eo pid,user,cmd", "ps -o user", "ps o user", "ps -p 1234 -o etime", "ps axww", "ps -u user", "ps U user", "ps --sort=-pcpu aux", "ps -C node"} {
		if got := rules(classify(t, src, testCtx)); len(got) != 0 {
			t.Errorf("%s: %v, want nothing", src, got)
		}
	}
}

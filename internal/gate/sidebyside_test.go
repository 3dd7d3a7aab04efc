package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/preset"
)

// TestComputeSideBySide: judging a large view's servers side by side gives
// the gate judging them one by one gives: states, digests, pinned files,
// folders pinned whole and their order, PATH lookups, blocks, warnings.
func TestComputeSideBySide(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one processor: Compute never judges side by side")
	}
	home, proj := t.TempDir(), t.TempDir()
	bin := filepath.Join(t.TempDir(), "bin")
	for _, p := range []string{"on-path", "node", "bash"} {
		writeFile(t, filepath.Join(bin, p), "#!/bin/sh\n")
		os.Chmod(filepath.Join(bin, p), 0o755)
	}
	var global, repo strings.Builder
	const n = 2 * sideBySide
	for i := range n {
		w := &global // every kind of server in both files
		if i/6%2 == 1 {
			w = &repo
		}
		if w.Len() > 0 {
			w.WriteString(",")
		}
		var e string
		switch i % 6 {
		case 0: // a script in the project: a pinned file
			writeFile(t, filepath.Join(proj, "tools", fmt.Sprintf("s%d.js", i)), fmt.Sprintf("// %d\n", i))
			e = fmt.Sprintf(`{"command": "node", "args": ["tools/s%d.js", "--port", "%d"]}`, i, i)
		case 1: // a program in the project that no runner explains: its tree
			writeFile(t, filepath.Join(proj, fmt.Sprintf("app%d", i), "run"), "#!/bin/sh\n")
			e = fmt.Sprintf(`{"command": "./app%d/run", "cwd": "app%d"}`, i, i)
		case 2: // a command on PATH, and one that is not
			e = `{"command": "on-path", "env": {"TOKEN": "${TOKEN_A}"}}`
			if i%4 == 0 {
				e = `{"command": "on-path", "env": {"TOKEN": "${TOKEN_B}"}}`
			}
			if i%8 == 0 {
				e = fmt.Sprintf(`{"command": "missing-%d"}`, i%20)
			}
		case 3:
			e = fmt.Sprintf(`{"url": "https://h%d.example/mcp", "headers": {"Authorization": "Bearer ${T_%d}"}}`, i, i)
		case 4: // a code-loading variable naming a file in the project
			writeFile(t, filepath.Join(proj, "lib", fmt.Sprintf("x%d.sh", i)), "true\n")
			e = fmt.Sprintf(`{"command": "bash", "args": ["-c", "true"], "env": {"BASH_ENV": "lib/x%d.sh"}}`, i)
		default:
			e = fmt.Sprintf(`{"command": "on-path", "disabled": %v}`, i%4 == 1)
		}
		fmt.Fprintf(w, `"srv-%d": %s`, i, e)
	}
	writeFile(t, filepath.Join(home, ".config", "mcp", "mcp.json"), `{"mcpServers": {`+global.String()+`}}`)
	writeFile(t, filepath.Join(proj, ".mcp.json"), `{"mcpServers": {`+repo.String()+`}}`)
	getenv := func(k string) string {
		switch k {
		case "PATH":
			return bin
		case "TOKEN_A":
			return "set"
		}
		return ""
	}
	view, err := mcpconfig.Load(mcpconfig.Options{Home: home, Cwd: proj, Getenv: getenv})
	if err != nil || len(view.Servers) != n {
		t.Fatalf("%d servers, %v", len(view.Servers), err)
	}
	in := func(sideBySide bool) Input {
		in := Input{View: view, Project: "p", Getenv: getenv, Optional: preset.OptionalVars}
		if sideBySide {
			in.newFS = func(servers int) FS { return newSnapFS(servers) }
		} else {
			in.FS = newSnapFS(n)
		}
		return in
	}
	one, both := Compute(in(false)), Compute(in(true))
	states := map[string]int{}
	for _, s := range one.Servers {
		states[s.State]++
	}
	if len(one.TreePins) == 0 || states[NeedsCommand] == 0 || states[PendingApproval] == 0 || states[Ready] == 0 || states[NeedsEnv] == 0 {
		t.Fatalf("tree pins %d, states %v: the fixture does not reach what the test compares", len(one.TreePins), states)
	}
	for i := range one.Servers {
		if !reflect.DeepEqual(one.Servers[i], both.Servers[i]) {
			t.Errorf("server %d:\none by one   %+v\nside by side %+v", i, one.Servers[i], both.Servers[i])
		}
	}
	if !reflect.DeepEqual(one.TreePins, both.TreePins) || !reflect.DeepEqual(one.Blocks, both.Blocks) || !reflect.DeepEqual(one.Warnings, both.Warnings) {
		t.Errorf("one by one: tree pins %q, blocks %+v, warnings %+v\nside by side: tree pins %q, blocks %+v, warnings %+v",
			one.TreePins, one.Blocks, one.Warnings, both.TreePins, both.Blocks, both.Warnings)
	}
}

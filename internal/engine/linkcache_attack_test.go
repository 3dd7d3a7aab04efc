package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/piagent/piagent/internal/guard"
)

// An attacker's review of the answer after an edit (issue 46) found this: a folder on a cached path's way is removed and made again.
// The new folder is never watched (linkCache.watched still names the old
// one), so a file in it turned into a link into ~/.ssh is never seen:
// the read is judged by the path remembered as link-free.
func TestEditLinkCacheRecreatedFolder(t *testing.T) {
	for _, noise := range []bool{false, true} {
		name := "quiet"
		if noise {
			name = "with a write beside"
		}
		t.Run(name, func(t *testing.T) {
			home, proj := registryWorld(t)
			os.MkdirAll(filepath.Join(proj, "src"), 0o755)
			os.WriteFile(filepath.Join(proj, "src", "main.go"), []byte("package main\n"), 0o644)
			secrets := filepath.Join(home, ".ssh")
			os.MkdirAll(secrets, 0o700)
			os.WriteFile(filepath.Join(secrets, "id_rsa"), []byte("KEY\n"), 0o600)
			a := filepath.Join(proj, "a")
			os.MkdirAll(a, 0o755)
			os.WriteFile(filepath.Join(a, "x"), []byte("plain\n"), 0o644)
			en := &Engine{Home: home, Cwd: proj}
			call := guard.Call{ToolName: "read", Input: map[string]any{"path": "a/x"}}
			// control: a direct link is refused
			direct := guard.Call{ToolName: "read", Input: map[string]any{"path": filepath.Join(secrets, "id_rsa")}}
			if d := en.Check(direct); d.Allowed() {
				t.Fatalf("control: read of ~/.ssh/id_rsa allowed: %+v", d)
			}
			if d := en.Check(call); !d.Allowed() {
				t.Fatalf("read a/x: %+v", d)
			}
			// the agent's command: rm -r a; mkdir a; echo plain > a/x
			os.RemoveAll(a)
			os.Mkdir(a, 0o755)
			os.WriteFile(filepath.Join(a, "x"), []byte("plain\n"), 0o644)
			if d := en.Check(call); !d.Allowed() {
				t.Fatalf("read a/x again: %+v", d)
			}
			// the agent's next command: a/x becomes a link to ~/.ssh/id_rsa
			os.Remove(filepath.Join(a, "x"))
			if err := os.Symlink(filepath.Join(secrets, "id_rsa"), filepath.Join(a, "x")); err != nil {
				t.Fatal(err)
			}
			if noise {
				os.WriteFile(filepath.Join(proj, "README.md"), []byte("x"), 0o644)
			}
			if d := en.Check(call); d.Allowed() {
				data, _ := os.ReadFile(filepath.Join(a, "x"))
				t.Errorf("read of a/x, now a link to ~/.ssh/id_rsa, allowed (it would read %q): %+v", data, d)
			} else {
				t.Logf("blocked: %s", d.Reason)
			}
		})
	}
}

// The same hole for a write: a/x, remembered as a plain file, becomes a
// link to the approval store; a write tool call through it is judged as a
// write of a/x.
func TestEditLinkCacheRecreatedFolderWrite(t *testing.T) {
	home, proj := registryWorld(t)
	os.MkdirAll(filepath.Join(proj, "src"), 0o755)
	os.WriteFile(filepath.Join(proj, "src", "main.go"), []byte("package main\n"), 0o644)
	store := filepath.Join(home, ".pi", "piagent-mcp-approvals.json")
	os.MkdirAll(filepath.Dir(store), 0o700)
	os.WriteFile(store, []byte("{}"), 0o600) // the store exists (a dangling link to it is another story)
	a := filepath.Join(proj, "a")
	os.MkdirAll(a, 0o755)
	os.WriteFile(filepath.Join(a, "x"), []byte("plain\n"), 0o644)
	en := &Engine{Home: home, Cwd: proj}
	call := guard.Call{ToolName: "write", Input: map[string]any{"path": "a/x", "content": "{}"}}
	if d := en.Check(guard.Call{ToolName: "write", Input: map[string]any{"path": store, "content": "{}"}}); d.Allowed() {
		t.Fatalf("control: write of the store allowed: %+v", d)
	}
	if d := en.Check(call); !d.Allowed() {
		t.Fatalf("write a/x: %+v", d)
	}
	os.RemoveAll(a)
	os.Mkdir(a, 0o755)
	os.WriteFile(filepath.Join(a, "x"), []byte("plain\n"), 0o644)
	if d := en.Check(call); !d.Allowed() {
		t.Fatalf("write a/x again: %+v", d)
	}
	os.Remove(filepath.Join(a, "x"))
	if err := os.Symlink(store, filepath.Join(a, "x")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(proj, "README.md"), []byte("x"), 0o644)
	if d := en.Check(call); d.Allowed() {
		t.Errorf("write of a/x, now a link to the approval store, allowed: %+v", d)
	} else {
		t.Logf("blocked: %s", d.Reason)
	}
}

// Two folders on cached paths' ways swap names (mv a c; mv b a): both
// stay watched, each under the other's old name, so the link made in the
// new a/ is an event named b/x, which forgets b/x alone; a/x stays
// remembered as link-free. Before 1f08e7d any event forgot everything.
func TestEditLinkCacheSwappedFolders(t *testing.T) {
	home, proj := registryWorld(t)
	os.MkdirAll(filepath.Join(proj, "src"), 0o755)
	os.WriteFile(filepath.Join(proj, "src", "main.go"), []byte("package main\n"), 0o644)
	secrets := filepath.Join(home, ".ssh")
	os.MkdirAll(secrets, 0o700)
	os.WriteFile(filepath.Join(secrets, "id_rsa"), []byte("KEY\n"), 0o600)
	a, b := filepath.Join(proj, "a"), filepath.Join(proj, "b")
	for _, d := range []string{a, b} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "x"), []byte("plain\n"), 0o644)
	}
	en := &Engine{Home: home, Cwd: proj}
	ax := guard.Call{ToolName: "read", Input: map[string]any{"path": "a/x"}}
	bx := guard.Call{ToolName: "read", Input: map[string]any{"path": "b/x"}}
	for _, c := range []guard.Call{ax, bx} {
		if d := en.Check(c); !d.Allowed() {
			t.Fatalf("read: %+v", d)
		}
	}
	// mv a c && mv b a
	if err := os.Rename(a, filepath.Join(proj, "c")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(b, a); err != nil {
		t.Fatal(err)
	}
	if d := en.Check(ax); !d.Allowed() { // resolved again after the moves, remembered
		t.Fatalf("read a/x after the swap: %+v", d)
	}
	// rm a/x && ln -s ~/.ssh/id_rsa a/x
	os.Remove(filepath.Join(a, "x"))
	if err := os.Symlink(filepath.Join(secrets, "id_rsa"), filepath.Join(a, "x")); err != nil {
		t.Fatal(err)
	}
	if d := en.Check(ax); d.Allowed() {
		t.Errorf("read of a/x, now a link to ~/.ssh/id_rsa, allowed: %+v", d)
	} else {
		t.Logf("blocked: %s", d.Reason)
	}
}

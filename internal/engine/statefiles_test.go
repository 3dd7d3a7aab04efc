package engine

import (
	"errors"
	"github.com/piagent/piagent/internal/testenv"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/approval"
	"github.com/piagent/piagent/internal/catalogue"
	"github.com/piagent/piagent/internal/grant"
	"github.com/piagent/piagent/internal/guard"
	"github.com/piagent/piagent/internal/policy"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/safefile"
)

// stateFile is one of piagent's own state files and how it is read and
// written.
type stateFile struct {
	name  string
	path  func(home string) string
	valid string // a content the store accepts
	read  func(home string) error
	write func(home string) error
}

var stateFiles = []stateFile{
	{"approvals", registry.ApprovalStore, `{"schemaVersion": 1, "projects": {}}` + "\n",
		func(home string) error { _, err := approval.Open(registry.ApprovalStore(home)).Load(); return err },
		func(home string) error {
			return approval.Open(registry.ApprovalStore(home)).Update(func(d *approval.Data) error {
				d.Set("/p", "s", approval.Decision{Decision: "rejected"})
				return nil
			})
		}},
	{"modes", registry.ModeStore, `{"version": 1, "projects": {"/p": "readOnly"}}` + "\n",
		func(home string) error { _, err := policy.ProjectModeChoice(home, "/p"); return err },
		func(home string) error { return policy.SetProjectMode(home, "/q", "ship") }},
	{"grants", registry.GrantsFile, `{"version": 1, "projects": {}}` + "\n",
		func(home string) error { _, err := grant.Of(home, "/p", "s"); return err },
		func(home string) error {
			_, err := grant.Add(home, "/p", "s", grant.Grant{Env: []string{"X"}}, false)
			return err
		}},
	{"pins", registry.CataloguePins, `{"version": 1, "pins": {}}` + "\n",
		func(home string) error { _, err := catalogue.Load(registry.CataloguePins(home)); return err },
		func(home string) error {
			return catalogue.Record(registry.CataloguePins(home), "k", catalogue.Catalogue{Tools: map[string]string{}}, true, time.Now())
		}},
}

// within runs fn and fails the test when it takes longer than 100 ms, or
// hangs.
func within(t *testing.T, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- fn() }()
	select {
	case err := <-done:
		if d := time.Since(start); d > testenv.Slow(100*time.Millisecond) {
			t.Errorf("%s took %v", what, d)
		}
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s hangs", what)
		return nil
	}
}

// TestStateFilesRefuseWhatIsNotThePersons (issue 40, items 2, 5 and 7):
// each of piagent's state files — the approval store, the mode store,
// grants and catalogue pins — planted as a FIFO, a link to /dev/zero,
// invalid UTF-8, writable by every user, in a ~/.pi writable by every
// user, leading to another user's file, or (as root) owned by another user
// or writable by a group not the person's own, is refused by its reader and its writer
// within 100 ms, with an error naming the file, and is left as it was.
// Before, the FIFO hung, /dev/zero was read without end, and the rest was
// trusted (and rewritten, invalid UTF-8 altered).
func TestStateFilesRefuseWhatIsNotThePersons(t *testing.T) {
	t.Parallel()
	type plant struct {
		name  string
		do    func(t *testing.T, home, p, valid string)
		want  error
		named func(home, p string) string // the path the error must name
	}
	self := func(_, p string) string { return p }
	plants := []plant{
		{"fifo", func(t *testing.T, _, p, _ string) {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
		}, nil, self},
		{"dev-zero", func(t *testing.T, _, p, _ string) { os.Symlink("/dev/zero", p) }, nil, self},
		{"invalid-utf8", func(t *testing.T, _, p, valid string) {
			os.WriteFile(p, []byte(strings.Replace(valid, "{", "{\"\xff\": 1, ", 1)), 0o600)
		}, nil, self},
		{"world-writable", func(t *testing.T, _, p, valid string) {
			os.WriteFile(p, []byte(valid), 0o600)
			os.Chmod(p, 0o666)
		}, safefile.ErrUnsafe, self},
		{"pi-dir-world-writable", func(t *testing.T, home, p, valid string) {
			os.WriteFile(p, []byte(valid), 0o600)
			os.Chmod(filepath.Dir(p), 0o777)
		}, safefile.ErrUnsafe, func(home, p string) string { return filepath.Dir(p) }},
		{"link-to-another-users-file", func(t *testing.T, home, p, valid string) {
			// a file this user cannot have made: root's (or, as root,
			// one given to uid 1001)
			target := "/etc/hostname"
			if os.Geteuid() == 0 {
				target = filepath.Join(home, "foreign.json")
				os.WriteFile(target, []byte(valid), 0o644)
				if err := os.Chown(target, 1001, 1001); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
		}, safefile.ErrUnsafe, nil},
	}
	if os.Geteuid() == 0 {
		plants = append(plants, plant{"owned-by-another-user", func(t *testing.T, _, p, valid string) {
			os.WriteFile(p, []byte(valid), 0o600)
			if err := os.Chown(p, 1001, 1001); err != nil {
				t.Fatal(err)
			}
		}, safefile.ErrUnsafe, self}, plant{"group-writable-by-another-group", func(t *testing.T, _, p, valid string) {
			os.WriteFile(p, []byte(valid), 0o600)
			os.Chmod(p, 0o660)
			if err := os.Chown(p, -1, 1001); err != nil {
				t.Fatal(err)
			}
		}, safefile.ErrUnsafe, self})
	}
	for _, sf := range stateFiles {
		for _, pl := range plants {
			t.Run(sf.name+"/"+pl.name, func(t *testing.T) {
				t.Parallel()
				home := t.TempDir()
				p := sf.path(home)
				os.MkdirAll(filepath.Dir(p), 0o700)
				pl.do(t, home, p, sf.valid)
				fi, _ := os.Lstat(p)
				before, _ := os.Readlink(p)
				var data []byte
				if fi.Mode().IsRegular() {
					data, _ = os.ReadFile(p)
				}
				for what, fn := range map[string]func(string) error{"read": sf.read, "write": sf.write} {
					err := within(t, sf.name+" "+what, func() error { return fn(home) })
					if err == nil {
						t.Fatalf("%s of %s planted as %s: no error", what, sf.name, pl.name)
					}
					if pl.want != nil && !errors.Is(err, pl.want) {
						t.Errorf("%s: %v, want %v", what, err, pl.want)
					}
					if pl.named != nil && !strings.Contains(err.Error(), pl.named(home, p)) {
						t.Errorf("%s: %v does not name %s", what, err, pl.named(home, p))
					}
					if errors.Is(err, safefile.ErrUnsafe) && !strings.Contains(err.Error(), "fix: ") {
						t.Errorf("%s: %v names no fix", what, err)
					}
				}
				after, _ := os.Lstat(p)
				link, _ := os.Readlink(p)
				if after.Mode() != fi.Mode() || link != before {
					t.Errorf("%s was replaced: %v -> %v", p, fi.Mode(), after.Mode())
				}
				if fi.Mode().IsRegular() {
					if now, _ := os.ReadFile(p); string(now) != string(data) {
						t.Errorf("%s was rewritten:\n%q\n%q", p, data, now)
					}
				}
			})
		}
	}
}

// TestUnsafePolicyBlocks (issue 40, item 5): the person's policy file
// writable by every user, or owned by another user (as root), is not
// applied: every call is blocked, naming the file and the fix, and a
// running engine sees the change at its next call.
func TestUnsafePolicyBlocks(t *testing.T) {
	t.Parallel()
	home, proj := t.TempDir(), t.TempDir()
	p := registry.UserPolicy(home)
	os.MkdirAll(filepath.Dir(p), 0o700)
	os.WriteFile(p, []byte(`{"version": 1}`+"\n"), 0o600)
	en := &Engine{Home: home, Cwd: proj}
	call := guard.Call{ToolName: "read", Input: map[string]any{"path": "README.md"}}
	if d := en.Decide(call); d.Action == "block" {
		t.Fatalf("the person's own policy: %+v", d)
	}
	os.Chmod(p, 0o666)
	d := en.Decide(call)
	if d.Action != "block" || !strings.Contains(d.Reason, p) || !strings.Contains(d.Reason, "chmod 600") {
		t.Fatalf("a policy every user may write: %+v", d)
	}
}

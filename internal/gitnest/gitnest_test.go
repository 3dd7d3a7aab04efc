package gitnest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.email=a@b", "-c", "user.name=a", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// gitlinksOf is git's own answer: the paths of mode 160000 in ls-files -s.
func gitlinksOf(t *testing.T, dir string) []string {
	var out []string
	for line := range strings.Lines(git(t, dir, "ls-files", "-s")) {
		if mode, rest, ok := strings.Cut(line, " "); ok && mode == "160000" {
			_, path, _ := strings.Cut(rest, "\t")
			out = append(out, strings.TrimSpace(path))
		}
	}
	return out
}

// The index git writes, in each version and object format, read as git
// reads it: the same gitlinks, among files whose paths share prefixes (the
// compression of version 4) and an entry with extended flags (version 3).
func TestGitlinksAgreeWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed")
	}
	for _, format := range []string{"sha1", "sha256"} {
		for _, version := range []string{"2", "3", "4"} {
			t.Run(format+"/v"+version, func(t *testing.T) {
				dir := t.TempDir()
				git(t, dir, "init", "-q", "--object-format="+format)
				for _, p := range []string{"a.txt", "dir/a-long-name.txt", "dir/a-long-name2.txt", "dir/sub/x.go", "z.txt"} {
					os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
					os.WriteFile(filepath.Join(dir, p), []byte(p), 0o644)
				}
				for _, s := range []string{"dir/nested", "vendor/lib", "zz"} {
					sub := filepath.Join(dir, s)
					os.MkdirAll(sub, 0o755)
					git(t, sub, "init", "-q", "--object-format="+format)
					git(t, sub, "commit", "-q", "--allow-empty", "-m", "x")
				}
				git(t, dir, "add", ".")
				if version == "3" {
					git(t, dir, "update-index", "--skip-worktree", "a.txt")
				}
				git(t, dir, "update-index", "--index-version", version)
				b, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
				if err != nil {
					t.Fatal(err)
				}
				got, err := Gitlinks(b, HashSize(filepath.Join(dir, ".git")))
				if err != nil {
					t.Fatal(err)
				}
				want := gitlinksOf(t, dir)
				if !GitReads(b, HashSize(filepath.Join(dir, ".git"))) {
					t.Error("GitReads: false for git's own index")
				}
				if GitReads(append(b[:len(b)-1:len(b)-1], b[len(b)-1]^1), HashSize(filepath.Join(dir, ".git"))) {
					t.Error("GitReads: true for an index whose hash does not match")
				}
				if len(want) != 3 || !slices.Equal(got, want) {
					t.Errorf("Gitlinks = %q, git says %q", got, want)
				}
			})
		}
	}
}

func TestGitlinksMalformed(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("DIRC"), []byte("DIRC\x00\x00\x00\x05\x00\x00\x00\x01"), []byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x01short")} {
		if _, err := Gitlinks(b, 20); err == nil {
			t.Errorf("Gitlinks(%q): no error", b)
		}
	}
}

func FuzzGitlinks(f *testing.F) {
	dir := f.TempDir()
	cmd := exec.Command("sh", "-c", "git init -q . && mkdir s && cd s && git init -q && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m x && cd .. && echo a > a && git add . && git update-index --index-version 4")
	cmd.Dir = dir
	if cmd.Run() == nil {
		if b, err := os.ReadFile(filepath.Join(dir, ".git", "index")); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("DIRC\x00\x00\x00\x04\x00\x00\x00\x02"))
	f.Fuzz(func(t *testing.T, b []byte) {
		links, err := Gitlinks(b, 20)
		if err == nil && len(links) > len(b) {
			t.Fatalf("more links than bytes")
		}
	})
}

func TestConfigRisk(t *testing.T) {
	safe := []string{
		"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n",
		"[core]\n\trepositoryformatversion = 0\n[remote \"origin\"]\n\turl = https://example.com/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n",
		"[core]\n\tworktree = ../../../sub\n# a comment\n; another\n[Core]\n\tBare = false\n",
		"",
	}
	for _, s := range safe {
		if key, risky := ConfigRisk([]byte(s)); risky {
			t.Errorf("safe config %q: risky (%s)", s, key)
		}
	}
	risky := map[string]string{
		"[core]\n\tfsmonitor = touch /tmp/x\n":                 "core.fsmonitor",
		"[core] fsmonitor = x\n":                               "core.fsmonitor",
		"[CORE]\n\tFSMonitor = x\n":                            "core.fsmonitor",
		"[core]\n\thooksPath = /tmp\n":                         "core.hookspath",
		"[include]\n\tpath = ../x\n":                           "include.path",
		"[includeIf \"gitdir:/\"]\n\tpath = x\n":               "includeif.gitdir:/.path",
		"[filter \"lfs\"]\n\tclean = x\n":                      "filter.lfs.clean",
		"[diff \"x\"]\n\ttextconv = x\n":                       "diff.x.textconv",
		"[core]\n\tbare = false \\\nfsmonitor = x\n":           "core.fsmonitor",
		"fsmonitor = x\n":                                      "a setting outside any section",
		"[core\n\tfsmonitor = x\n":                             "an unreadable section header",
		"[core]\n\t=x\n":                                       "an unreadable line",
		"[core \"x\"]\n\tbare = false\n":                       "core.x.bare",
		"[remote]\n\turl = x\n":                                "remote.url",
		"[alias]\n\tst = !touch /tmp/x\n":                      "alias.st",
		"[core]\n\trepositoryformatversion = 0\n\tpager = x\n": "core.pager",
	}
	for s, want := range risky {
		key, ok := ConfigRisk([]byte(s))
		if !ok || key != want {
			t.Errorf("ConfigRisk(%q) = %q, %v; want %q, true", s, key, ok, want)
		}
	}
}

// Check on repositories as git makes them: git init inside the work tree
// and git submodule add are safe until a setting off the list appears;
// a .git file leading out of the project, a link, a commondir are risks;
// an unpopulated gitlink is not looked at.
func TestCheck(t *testing.T) {
	proj := t.TempDir()
	git(t, proj, "init", "-q")
	up := t.TempDir()
	git(t, up, "init", "-q")
	git(t, up, "commit", "-q", "--allow-empty", "-m", "x")
	os.Mkdir(filepath.Join(proj, "sub"), 0o755)
	git(t, filepath.Join(proj, "sub"), "init", "-q")
	git(t, filepath.Join(proj, "sub"), "commit", "-q", "--allow-empty", "-m", "x")
	git(t, proj, "submodule", "-q", "add", up, "mod")
	git(t, proj, "add", "sub")
	b, _ := os.ReadFile(filepath.Join(proj, ".git", "index"))
	links, err := Gitlinks(b, 20)
	if err != nil || !slices.Equal(links, []string{"mod", "sub"}) {
		t.Fatalf("links %q, %v", links, err)
	}
	if r := Check(proj, append(links, "gone", "../out")); len(r) != 0 {
		t.Fatalf("fresh repositories: %+v", r)
	}
	git(t, filepath.Join(proj, "sub"), "config", "core.fsmonitor", "touch x")
	git(t, filepath.Join(proj, "mod"), "config", "core.sshCommand", "touch x")
	r := Check(proj, links)
	want := []Risk{{".git/modules/mod/config", "a config setting core.sshcommand"}, {"sub/.git/config", "a config setting core.fsmonitor"}}
	if !slices.Equal(r, want) {
		t.Errorf("Check = %+v, want %+v", r, want)
	}
	// a .git file out of the project, and a link
	os.RemoveAll(filepath.Join(proj, "mod", ".git"))
	os.WriteFile(filepath.Join(proj, "mod", ".git"), []byte("gitdir: "+filepath.Join(up, ".git")+"\n"), 0o644)
	os.RemoveAll(filepath.Join(proj, "sub", ".git"))
	os.Symlink(filepath.Join(up, ".git"), filepath.Join(proj, "sub", ".git"))
	r = Check(proj, links)
	if len(r) != 2 || r[0].Path != "mod/.git" || r[1].Path != "sub/.git" {
		t.Errorf("Check = %+v, want mod/.git and sub/.git", r)
	}
}

// TestIncludesContinued: git joins a value a backslash ends with the next
// line; an escaped backslash ending a line continues nothing, and the
// line-by-line reading is kept beside the joined one.
func TestIncludesContinued(t *testing.T) {
	got := Includes([]byte("[include]\n\tpath = ../sha\\\nred.gitconfig\n[include]\r\n\tpath = a\\\r\nb\n[include]\n\tpath = c\\\\\n[include]\n\tpath = d\n"))
	for _, want := range []string{"../shared.gitconfig", "ab", "c\\", "d"} {
		if !slices.Contains(got, want) {
			t.Errorf("%q not among %q", want, got)
		}
	}
}

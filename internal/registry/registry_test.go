package registry

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestListAndMatch(t *testing.T) {
	t.Parallel()
	in := Input{Home: "/h", AgentDir: "/h/.pi/agent", Project: "/p", ConfigDir: ".pi",
		Consulted: []string{"/p/.mcp.json", "/a/.mcp.json"}, Binaries: []string{"/usr/bin/piagent"}}
	entries := List(in)
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e.Path] {
			t.Errorf("%s listed twice", e.Path)
		}
		seen[e.Path] = true
	}
	set := NewSet(entries)
	for _, tc := range []struct {
		p     string
		match bool
	}{
		{"/h/.pi/piagent-mcp-approvals.json", true},
		{"/h/.pi/piagent-mcp-approvals.json.lock", true},
		{"/h/.pi/piagent-modes.json", true},
		{"/h/.pi/piagent/launch/x.json", true},
		{"/h/.pi/agent/trust.json", true},
		{"/h/.pi/agent/extensions/a/index.ts", true},
		{"/h/.pi/agent/mcp-npx-cache.json", true},
		{"/h/.PI/AGENT/SETTINGS.JSON", true}, // case-folding file systems
		{"/p/.pi/extensions/x.ts", true},
		{"/p/.git/hooks/pre-commit", true},
		{"/p/.git/config", true},
		{"/a/.mcp.json", true},
		{"/usr/bin/piagent", true},
		{"/h/.pi/agent/sessions/s.jsonl", false},
		{"/p/src/main.go", false},
		{"/p/.git/HEAD", false},
		{"/p/.pi-other", false},
		{"/tmp/jiti/guard-1a2b.cjs", true}, // Pi loads it at its next start
		{"/tmp/node-compile-cache/v22/x", true},
		{"/tmp/jiti-other", false},
	} {
		if _, ok := set.Match(tc.p); ok != tc.match {
			t.Errorf("Match(%s) = %v, want %v", tc.p, ok, tc.match)
		}
	}
	for _, tc := range []struct {
		p    string
		hold bool
	}{
		{"/h/.pi", true}, {"/h", true}, {"/", true}, {"/p", true}, {"/p/.git", true},
		{"/p/src", false}, {"/tmp", true}, {"/tmp/build", false}, {"/h/.pi/agent/sessions", false},
	} {
		if _, ok := set.Holds(tc.p); ok != tc.hold {
			t.Errorf("Holds(%s) = %v, want %v", tc.p, ok, tc.hold)
		}
	}
	// the adapter's cache, the catalogue pins, the mode store, both policies
	if w := Watched(entries); len(w) != 5 || !slices.Contains(w, CataloguePins("/h")) {
		t.Errorf("Watched = %v", w)
	}
}

func TestNoProject(t *testing.T) {
	t.Parallel()
	for _, e := range List(Input{Home: "/h", AgentDir: "/h/.pi/agent"}) {
		if e.Path == "" || e.Path[0] != '/' {
			t.Errorf("entry %+v is not absolute", e)
		}
	}
}

// TestHooksPathFolder: the folder core.hooksPath names, in the project's
// git config or the person's own, is registered like .git/hooks: relative
// from the project, ~/ from home, quoted and commented as git reads it.
func TestHooksPathFolder(t *testing.T) {
	t.Parallel()
	home, proj := t.TempDir(), t.TempDir()
	write := func(p, s string) { writeFile(t, p, s) }
	write(filepath.Join(proj, ".git", "config"), "[core]\n\tbare = false\n[Core]\n\thooksPath = .husky ; husky\n")
	write(filepath.Join(home, ".gitconfig"), "[core]\n\thookspath = \"~/git hooks\" # mine\n")
	write(filepath.Join(home, ".config", "git", "config"), "[core] hooksPath=/abs/hooks\n[alias]\n\thooksPath = not-this\n")
	set := NewSet(List(Input{Home: home, AgentDir: filepath.Join(home, ".pi", "agent"), Project: proj}))
	for _, p := range []string{filepath.Join(proj, ".husky", "pre-commit"), filepath.Join(home, "git hooks", "pre-push"), "/abs/hooks/x"} {
		if _, ok := set.Match(p); !ok {
			t.Errorf("%s is not registered", p)
		}
	}
	for _, p := range []string{filepath.Join(proj, "not-this"), filepath.Join(proj, ".husky ; husky"), filepath.Join(proj, "src", "a.go")} {
		if f, ok := set.Match(p); ok {
			t.Errorf("%s is registered (as %s)", p, f)
		}
	}
}

// TestHooksPathLayouts: husky's own layout (hooksPath = .husky/_) has the
// scripts in .husky registered too; a hooks path that is the project (or
// above it) registers the hooks by name, never the whole project.
func TestHooksPathLayouts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		hooksPath  string
		registered []string
		free       []string
	}{
		{".husky/_", []string{".husky/pre-commit", ".husky/_/pre-commit", ".husky/_/h"}, []string{"src/a.go", "package.json"}},
		{".", []string{"pre-commit", "post-checkout", "commit-msg"}, []string{"src/a.go", "package.json", "README.md"}},
		{"..", nil, []string{"src/a.go", "pre-commit"}},
	} {
		root := t.TempDir()
		home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
		if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proj, ".git", "config"), []byte("[core]\n\thooksPath = "+tc.hooksPath+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		set := NewSet(List(Input{Home: home, AgentDir: filepath.Join(home, ".pi", "agent"), Project: proj}))
		for _, rel := range tc.registered {
			if _, ok := set.Match(filepath.Join(proj, rel)); !ok {
				t.Errorf("hooksPath %s: %s is not registered", tc.hooksPath, rel)
			}
		}
		for _, rel := range tc.free {
			if f, ok := set.Match(filepath.Join(proj, rel)); ok {
				t.Errorf("hooksPath %s: %s is registered (as %s)", tc.hooksPath, rel, f)
			}
		}
		if tc.hooksPath == ".." {
			if _, ok := set.Match(filepath.Join(root, "pre-commit")); !ok {
				t.Errorf("hooksPath ..: the hook above the project is not registered")
			}
		}
	}
}

// TestGitIncludes: a file git's config includes is read as config (its
// core.fsmonitor, pager, filters and aliases run programs), so it is
// registered wherever it lies: from the project's .git/config (relative to
// the .git folder), from the person's own (~/ and includeIf), from an
// included file in turn (relative to it), and a hooksPath set in one is
// followed too. A cycle ends; what is not an include is not followed.
func TestGitIncludes(t *testing.T) {
	t.Parallel()
	home, proj := t.TempDir(), t.TempDir()
	write := func(p, s string) { writeFile(t, p, s) }
	write(filepath.Join(proj, ".git", "config"), "[core]\n\tbare = false\n[include]\n\tpath = ../shared.gitconfig ; the team's drivers\n[alias]\n\tpath = not-an-include\n")
	write(filepath.Join(proj, "shared.gitconfig"), "[Include]\n\tpath = \"tools/git/more.gitconfig\"\n[include]\n\tpath = shared.gitconfig\n")
	write(filepath.Join(proj, "tools", "git", "more.gitconfig"), "[core]\n\thooksPath = .githooks\n")
	write(filepath.Join(home, ".gitconfig"), "[includeIf \"gitdir:~/work/\"]\n\tpath = ~/.gitconfig-work\n[include]\n\tpath = .gitconfig.local\n")
	set := NewSet(List(Input{Home: home, AgentDir: filepath.Join(home, ".pi", "agent"), Project: proj}))
	for _, p := range []string{
		filepath.Join(proj, "shared.gitconfig"), filepath.Join(proj, "tools", "git", "more.gitconfig"),
		filepath.Join(proj, ".githooks", "pre-commit"), filepath.Join(home, ".gitconfig-work"), filepath.Join(home, ".gitconfig.local"),
	} {
		if _, ok := set.Match(p); !ok {
			t.Errorf("%s is not registered", p)
		}
	}
	for _, p := range []string{filepath.Join(proj, ".git", "not-an-include"), filepath.Join(proj, "not-an-include"), filepath.Join(proj, "tools", "git", "other"), filepath.Join(proj, "src", "a.go")} {
		if f, ok := set.Match(p); ok {
			t.Errorf("%s is registered (as %s)", p, f)
		}
	}
}

// TestOtherTools: the other coding tools' project files that run programs
// when the person opens the project with them are registered (Claude
// Code's whole folder, the others' settings files), and what lies beside
// them is the project's own.
func TestOtherTools(t *testing.T) {
	t.Parallel()
	home, proj := t.TempDir(), t.TempDir()
	set := NewSet(List(Input{Home: home, AgentDir: filepath.Join(home, ".pi", "agent"), Project: proj}))
	for _, rel := range []string{".claude/settings.json", ".claude/settings.local.json", ".claude/hooks/lint.sh", ".cursor/mcp.json",
		".gemini/settings.json", ".codex/config.toml", ".vscode/tasks.json", ".vscode/settings.json", ".zed/settings.json",
		".cursor/hooks.json", ".opencode/plugins/fmt.ts", ".opencode/opencode.jsonc", ".opencode/package.json", "opencode.jsonc", ".roo/mcp.json", ".kiro/settings/mcp.json",
		".gemini/extensions/x/gemini-extension.json", ".gemini/commands/fix.toml", ".gemini/.env", ".kiro/hooks/lint.kiro.hook",
		".devcontainer/devcontainer.json", ".devcontainer/init.sh", ".devcontainer.json"} {
		if _, ok := set.Match(filepath.Join(proj, rel)); !ok {
			t.Errorf("%s is not registered", rel)
		}
	}
	for _, rel := range []string{"CLAUDE.md", ".cursor/rules/style.mdc", ".vscode/launch.json", ".vscode/extensions.json", ".gemini/GEMINI.md", "src/a.go", ".cursor/hooks/lint.sh", "AGENTS.md", ".roo/rules/style.md", ".kiro/steering/product.md"} {
		if f, ok := set.Match(filepath.Join(proj, rel)); ok {
			t.Errorf("%s is registered (as %s)", rel, f)
		}
	}
}

// TestGitIncludeForms: includes git honours in forms the reading missed.
// An included file that is a link (.gitconfig -> tools/gitconfig, a
// dotfiles layout): git reads where it leads, so that file is registered
// too. A value continued on the next line (path = ../sha\ newline
// red.gitconfig). A path from the person's own home by name (~alice/…),
// which git expands as it does ~/.
func TestGitIncludeForms(t *testing.T) {
	t.Parallel()
	home, proj := t.TempDir(), t.TempDir()
	write := func(p, s string) { writeFile(t, p, s) }
	me, err := user.Current()
	if err != nil || me.HomeDir == "" || strings.ContainsAny(me.Username, "/ \\") {
		t.Skip("no user name here")
	}
	write(filepath.Join(proj, ".git", "config"), "[include]\n\tpath = ../.gitconfig\n[include]\n\tpath = ../sha\\\nred.gitconfig\n[include]\n\tpath = ~"+me.Username+"/.gitconfig-by-name\n")
	write(filepath.Join(proj, "tools", "gitconfig"), "[diff \"lockb\"]\n\ttextconv = bun\n")
	if err := os.Symlink(filepath.Join("tools", "gitconfig"), filepath.Join(proj, ".gitconfig")); err != nil {
		t.Fatal(err)
	}
	set := NewSet(List(Input{Home: home, AgentDir: filepath.Join(home, ".pi", "agent"), Project: proj}))
	for _, p := range []string{
		filepath.Join(proj, ".gitconfig"), filepath.Join(proj, "tools", "gitconfig"), filepath.Join(proj, "shared.gitconfig"),
		filepath.Join(me.HomeDir, ".gitconfig-by-name"),
	} {
		if _, ok := set.Match(p); !ok {
			t.Errorf("%s is not registered", p)
		}
	}
	if f, ok := set.Match(filepath.Join(proj, "tools", "other")); ok {
		t.Errorf("tools/other is registered (as %s)", f)
	}
}

// writeFile writes s to p, making its folders.
func writeFile(t testing.TB, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// preCommitHook is the head of the hook `pre-commit install` writes.
const preCommitHook = "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n# ID: 138fd403232d2ddd5efb44317e38bf03\n\n# start templated\nINSTALL_PYTHON=/usr/bin/python3\nARGS=(hook-impl --config=%s --hook-type=pre-commit)\n# end templated\n"

// lefthookHook is the part of the hook `lefthook install` writes that
// names it.
const lefthookHook = "#!/bin/sh\n\nif [ \"$LEFTHOOK\" = \"0\" ]; then\n  exit 0\nfi\n\ncall_lefthook run \"pre-commit\" \"$@\"\n"

// TestManagedHooks: a hook manager's hook runs, at the person's next
// commit, what a file of the work tree says: pre-commit's configuration
// (the one its hook names) and lefthook's files are registered when their
// hook is installed, in .git/hooks or in the folder core.hooksPath names,
// and not otherwise: a project without them keeps those names its own.
func TestManagedHooks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// files are written relative to a folder holding "home" and "proj"
		files     map[string]string
		want, not []string // relative to the project
	}{
		{"pre-commit", map[string]string{
			"proj/.git/hooks/pre-commit": fmt.Sprintf(preCommitHook, ".pre-commit-config.yaml"),
			"proj/.git/hooks/pre-push":   fmt.Sprintf(preCommitHook, "'ci/pre commit.yaml'"),
		}, []string{".pre-commit-config.yaml", "ci/pre commit.yaml"}, []string{"lefthook.yml"}},
		{"lefthook in hooksPath", map[string]string{
			"proj/.git/config":      "[core]\n\thooksPath = ../home/hooks\n",
			"home/hooks/commit-msg": lefthookHook,
		}, []string{"lefthook.yml", ".lefthook.yaml", ".config/lefthook.toml", "lefthook-local.yml", ".lefthook-local.jsonc", ".lefthook/pre-commit/lint.sh", ".lefthook-local/x.sh"},
			[]string{".pre-commit-config.yaml"}},
		// git 2.54 runs the hooks its config defines
		{"config hook", map[string]string{
			"proj/.git/config": "[core]\n[hook \"pre-commit\"]\n\tcommand = pre-commit hook-impl --hook-type=pre-commit\n\tevent = pre-commit\n[hook \"lint\"]\n\tcommand = lefthook run pre-push\n",
		}, []string{".pre-commit-config.yaml", "prek.toml", "lefthook.yml", "lefthook-local.properties", ".lefthook-local.hcl"}, nil},
		// samples git does not run, and a hook of the person's own
		{"none", map[string]string{
			"proj/.git/hooks/pre-commit.sample": fmt.Sprintf(preCommitHook, ".pre-commit-config.yaml") + lefthookHook,
			"proj/.git/hooks/pre-push":          "#!/bin/sh\nmake test\n",
		}, nil, []string{".pre-commit-config.yaml", "lefthook.yml", ".lefthook/x.sh"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
			for rel, content := range tc.files {
				writeFile(t, filepath.Join(root, rel), content)
			}
			set := NewSet(List(Input{Home: home, Project: proj}))
			for _, rel := range tc.want {
				if _, ok := set.Match(filepath.Join(proj, rel)); !ok {
					t.Errorf("%s is not registered", rel)
				}
			}
			for _, rel := range tc.not {
				if f, ok := set.Match(filepath.Join(proj, rel)); ok {
					t.Errorf("%s is registered (as %s)", rel, f)
				}
			}
		})
	}
}

// TestPreCommitConfigs: the configurations each form of a hook of
// pre-commit's family names, beside the defaults pre-commit and prek look
// for: the bash hooks' ARGS (shlex quoting with a blank and a quote
// inside; --config as one word or two; -c), the Python hooks' list
// (2.0-2.15) and CONFIG (before 2.0), prek's exec line, and the 1.2-1.5
// hooks known by their ID alone; none for a hook of another kind.
func TestPreCommitConfigs(t *testing.T) {
	t.Parallel()
	const head = "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n"
	const prek = "#!/bin/sh\n# File generated by prek: https://github.com/j178/prek\n"
	for hook, want := range map[string]string{
		fmt.Sprintf(preCommitHook, "ci/pc.yaml --skip-on-missing-config"):                                                  "ci/pc.yaml",
		fmt.Sprintf(preCommitHook, `'ci/a b.yaml'`):                                                                        "ci/a b.yaml",
		fmt.Sprintf(preCommitHook, `'it'"'"'s.yaml'`):                                                                      "it's.yaml",
		head + "ARGS=(hook-impl --config ci/pc.yaml --hook-type=pre-commit)\n":                                             "ci/pc.yaml",
		head + "ARGS=(hook-impl -c ci/pc.yaml --hook-type=pre-commit)\n":                                                   "ci/pc.yaml",
		head + "ARGS = ['hook-impl', '--config=ci/pc.yaml', '--hook-type=pre-commit']\n":                                   "ci/pc.yaml",
		"#!/usr/bin/env python\n\"\"\"File generated by pre-commit: https://pre-commit.com\"\"\"\nCONFIG = 'ci/pc.yaml'\n": "ci/pc.yaml",
		prek + "exec \"$PREK\" hook-impl --hook-dir \"$HERE\" --hook-type=pre-commit --config=\"ci/pc.yaml\" -- \"$@\"\n":  "ci/pc.yaml",
		prek + "exec \"$PREK\" hook-impl --hook-dir \"$HERE\" --hook-type=pre-commit -- \"$@\"\n":                          "prek.toml",
		"#!/usr/bin/env bash\n# This is a randomish md5 to identify this script\n# 138fd403232d2ddd5efb44317e38bf03\n":     ".pre-commit-config.yml",
		"pre-commit hook-impl --hook-type=pre-commit":                                                                      ".pre-commit-config.yaml",
	} {
		got := preCommitConfigs(hook)
		if !slices.Contains(got, want) || !slices.Contains(got, ".pre-commit-config.yaml") {
			t.Errorf("%q: %q, want %q among them", hook, got, want)
		}
	}
	// a planted hook full of -c words names a few, not thousands
	if got := preCommitConfigs("#!/bin/sh\n# pre-commit run\n" + strings.Repeat("-c a ", 10000) + "\n" + strings.Repeat("--config=b\n", 1000)); len(got) > 7 {
		t.Errorf("a hook of 11,000 -c and --config words names %d configurations", len(got))
	}
	for _, hook := range []string{"#!/bin/sh\nmake lint\n", lefthookHook, "#!/bin/sh\nsh -c 'exit 0'\n"} {
		if got := preCommitConfigs(hook); got != nil {
			t.Errorf("a hook of another kind names %q", got)
		}
	}
}

// BenchmarkListGitProject is the registry of a project as the sandbox
// computes it for every command: a git folder with git init's samples and
// pre-commit's hook installed (managedHooks reads the folder and the hook).
func BenchmarkListGitProject(b *testing.B) {
	home, proj := b.TempDir(), b.TempDir()
	for _, n := range []string{"applypatch-msg", "commit-msg", "fsmonitor-watchman", "post-update", "pre-applypatch", "pre-commit", "pre-merge-commit", "pre-push", "pre-rebase", "pre-receive", "prepare-commit-msg", "push-to-checkout", "sendemail-validate", "update"} {
		writeFile(b, filepath.Join(proj, ".git", "hooks", n+".sample"), "#!/bin/sh\nexit 0\n")
	}
	writeFile(b, filepath.Join(proj, ".git", "hooks", "pre-commit"), fmt.Sprintf(preCommitHook, ".pre-commit-config.yaml"))
	writeFile(b, filepath.Join(proj, ".git", "config"), "[core]\n\trepositoryformatversion = 0\n")
	in := Input{Home: home, AgentDir: filepath.Join(home, ".pi", "agent"), Project: proj}
	b.ReportAllocs()
	for b.Loop() {
		if len(List(in)) == 0 {
			b.Fatal("empty registry")
		}
	}
}

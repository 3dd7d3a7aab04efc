// Package registry is the one list of the files and folders whose content
// decides what runs on this machine or what an agent is allowed to do:
// piagent's own (the approval store, the mode store, the policy files, the
// launcher's folder), every MCP configuration layer and import kind's file,
// the adapter's state, Pi's settings, trust and extension folders, the
// project's git hooks and config, and the other coding tools' project files
// that run programs when the person opens the project with them.
//
// Everything that must know "what may the agent never change" reads this
// list: the guard's self-protection, the policy's protected files, the
// helper's watch list, doctor, and the sandbox profiles. Nothing else names
// these paths. The list is pure: it is computed from an Input and reads no
// file.
package registry

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/piagent/piagent/internal/gitnest"
	"github.com/piagent/piagent/internal/imports"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/safefile"
)

// Owner is who a registered path belongs to.
type Owner string

const (
	Piagent Owner = "piagent"
	MCP     Owner = "mcp" // MCP configuration and the adapter's state
	Pi      Owner = "pi"
	Git     Owner = "git"
	Tools   Owner = "tools" // other coding tools' project files
)

// Entry is one registered file or folder.
type Entry struct {
	// Path is clean and absolute.
	Path string `json:"path"`
	// Dir is set for a folder: everything beneath it is registered too.
	Dir   bool  `json:"dir,omitempty"`
	Owner Owner `json:"owner"`
	// What says in a few words why the path decides what runs.
	What string `json:"what"`
	// Secret is set where reading is refused too: credentials and tokens.
	Secret bool `json:"secret,omitempty"`
	// Watch is set for piagent's own state files whose change must
	// re-evaluate a cached decision (the configuration layers are watched
	// through the readers' own list).
	Watch bool `json:"watch,omitempty"`
}

// Input is what the list is computed from. Every path is absolute.
type Input struct {
	Home string
	// AgentDir is Pi's agent dir (paths.AgentDir).
	AgentDir string
	// Project is the directory Pi starts in; "" lists no project entries.
	Project string
	// ConfigDir is the project config folder's name, ".pi" unless Pi is
	// rebranded.
	ConfigDir string
	// Consulted is every further file a configuration reader looked at
	// (ancestor layers, import candidates, package manifests), present or
	// missing.
	Consulted []string
	// Binaries are piagent's own executables.
	Binaries []string
	// Extra are further folders registered for this session (the files the
	// extension runs from).
	Extra []string
	// TempDir is the temporary folder Pi's process sees ("" is this
	// process's, os.TempDir()): Pi's extension loader and Node keep code
	// caches there.
	TempDir string
}

// File names of piagent's own state under ~/.pi, and of its folder.
const (
	storeName  = "piagent-mcp-approvals.json"
	modesName  = "piagent-modes.json"
	policyName = "piagent-policy.json"
	ownDirName = "piagent"
)

// ApprovalStore is where decisions live, outside every repository.
func ApprovalStore(home string) string { return filepath.Join(home, ".pi", storeName) }

// ModeStore is where a person's per-project mode choice lives.
func ModeStore(home string) string { return filepath.Join(home, ".pi", modesName) }

// GrantsFile holds what a person let approved servers reach beyond their
// sandbox profile.
func GrantsFile(home string) string { return filepath.Join(home, ".pi", "piagent-grants.json") }

// CataloguePins is where what each approved server offered the model is
// pinned (package catalogue).
func CataloguePins(home string) string {
	return filepath.Join(home, ".pi", "piagent-catalogue-pins.json")
}

// UserPolicy is the user's tool policy override.
func UserPolicy(home string) string { return filepath.Join(home, ".pi", policyName) }

// ProjectPolicy is a project's tool policy override. It sits in ".pi"
// whatever Pi's config folder is called: it is piagent's file, not Pi's.
func ProjectPolicy(project string) string { return filepath.Join(project, ".pi", policyName) }

// OwnDir is piagent's own folder: the launcher's generated files, the setup
// record, the extension's files.
func OwnDir(home string) string { return filepath.Join(home, ".pi", ownDirName) }

// LaunchDir holds the launcher's generated configurations.
func LaunchDir(home string) string { return filepath.Join(OwnDir(home), "launch") }

// SetupRecord is what `piagent setup` installed.
func SetupRecord(home string) string { return filepath.Join(OwnDir(home), "setup.json") }

// QuarantineDir holds what the session's record found changed and put
// back (internal/baseline).
func QuarantineDir(home string) string { return filepath.Join(OwnDir(home), "quarantine") }

// SessionsDir holds each running launcher's record of the project.
func SessionsDir(home string) string { return filepath.Join(OwnDir(home), "sessions") }

// TreeDigests is the gate's cache of the digests of files pinned whole.
func TreeDigests(home string) string { return filepath.Join(OwnDir(home), "tree-digests") }

// NetworkRefusals is the network proxy's log of the connections it refused
// (host, port, who), read by the session notice and doctor.
func NetworkRefusals(home string) string { return filepath.Join(OwnDir(home), "network-refused.jsonl") }

// ExtensionDir is where `piagent extension path` writes the extension of
// one version.
func ExtensionDir(home, version string) string {
	return filepath.Join(OwnDir(home), "extension", version)
}

// LocksDir holds the locks piagent takes around edits of MCP files.
func LocksDir(home string) string { return filepath.Join(home, ".pi", "piagent-locks") }

// AdapterCache is the adapter's tool catalogue cache.
func AdapterCache(agentDir string) string { return filepath.Join(agentDir, "mcp-cache.json") }

// Watched lists the paths of entries marked Watch.
func Watched(entries []Entry) []string {
	var out []string
	for _, e := range entries {
		if e.Watch {
			out = append(out, e.Path)
		}
	}
	return out
}

// ImportFiles are the files the import kinds read beneath home and the
// project, the adapter's candidates and the real tools' paths (the opencode
// walk up to the git root arrives through Input.Consulted): imports.Files.
func ImportFiles(home, project string) []string { return imports.Files(home, project) }

// List computes the registry for in, sorted by path, without duplicates
// (the first description of a path wins).
func List(in Input) []Entry {
	var out []Entry
	add := func(p string, dir bool, o Owner, what string) *Entry {
		if p == "" {
			return nil
		}
		out = append(out, Entry{Path: filepath.Clean(p), Dir: dir, Owner: o, What: what})
		return &out[len(out)-1]
	}
	secret := func(e *Entry) { e.Secret = true }
	watch := func(e *Entry) { e.Watch = true }

	home, agent := in.Home, in.AgentDir
	cfg := in.ConfigDir
	if cfg == "" {
		cfg = ".pi"
	}

	// piagent's own.
	secret(add(ApprovalStore(home), false, Piagent, "approval store: who approved which server definition"))
	add(ApprovalStore(home)+".lock", false, Piagent, "the approval store's lock")
	watch(add(ModeStore(home), false, Piagent, "the person's mode choice per project"))
	add(ModeStore(home)+".lock", false, Piagent, "the mode store's lock")
	watch(add(UserPolicy(home), false, Piagent, "the user's tool policy"))
	add(GrantsFile(home), false, Piagent, "what servers may reach beyond their sandbox: a person's grants")
	add(GrantsFile(home)+".lock", false, Piagent, "the grants' lock")
	watch(add(CataloguePins(home), false, Piagent, "what each approved server offered the model: its catalogue pins"))
	add(CataloguePins(home)+".lock", false, Piagent, "the catalogue pins' lock")
	add(OwnDir(home), true, Piagent, "piagent's folder: the launcher's generated configuration, the setup record, the extension, Pi's temporary folder under piagent pi (its code caches), the sessions' records, the quarantine, the tree digests, the network proxy's refusals")
	add(LocksDir(home), true, Piagent, "the locks around piagent's edits of MCP files")
	for _, b := range in.Binaries {
		add(b, false, Piagent, "piagent's own executable")
	}
	for _, x := range in.Extra {
		add(x, true, Piagent, "files this session runs from")
	}

	// MCP configuration: every layer the adapter reads, every import kind's
	// files, the adapter's state in the agent dir.
	add(filepath.Join(home, ".config", "mcp", "mcp.json"), false, MCP, "global MCP configuration")
	add(filepath.Join(agent, "mcp.json"), false, MCP, "Pi-global MCP configuration (the adapter's and Pi's built-in client's)")
	for _, p := range ImportFiles(home, in.Project) {
		add(p, false, MCP, "an import kind's MCP configuration")
	}
	watch(add(AdapterCache(agent), false, MCP, "the adapter's tool catalogue cache"))
	add(filepath.Join(agent, "mcp-npx-cache.json"), false, MCP, "the adapter's npx resolution cache: it runs the binaries named there")
	add(filepath.Join(agent, "mcp-onboarding.json"), false, MCP, "the adapter's onboarding state")
	secret(add(filepath.Join(agent, "mcp-oauth"), true, MCP, "the adapter's OAuth tokens"))
	secret(add(filepath.Join(agent, "mcp-oauth-encrypted"), true, MCP, "the adapter's encrypted OAuth tokens"))
	add(filepath.Join(agent, "agent-plugin-data"), true, MCP, "agent plugins' data")

	// Pi's own.
	add(filepath.Join(agent, "settings.json"), false, Pi, "Pi's user settings: packages and extensions it loads")
	add(filepath.Join(agent, "trust.json"), false, Pi, "Pi's project trust: which projects' .pi files Pi loads")
	secret(add(filepath.Join(agent, "auth.json"), false, Pi, "Pi's provider credentials"))
	add(filepath.Join(agent, "models.json"), false, Pi, "Pi's model providers: where prompts and keys are sent")
	add(filepath.Join(agent, "extensions"), true, Pi, "extensions Pi loads into every session")
	add(filepath.Join(agent, "npm"), true, Pi, "Pi packages installed for the user")
	add(filepath.Join(agent, "git"), true, Pi, "Pi packages cloned for the user")
	// Code Pi loads at its next start from the temporary folder: jiti's
	// transpiled extensions (piagent's own guard among them), trusted by a
	// hash at their end, and Node's compile cache.
	tmp := in.TempDir
	if tmp == "" {
		tmp = os.TempDir()
	}
	for _, t := range slices.Compact([]string{filepath.Clean(tmp), "/tmp"}) {
		add(filepath.Join(t, "jiti"), true, Pi, "Pi's extension loader's cache: transpiled extensions Pi runs at its next start")
		add(filepath.Join(t, "node-compile-cache"), true, Pi, "Node's compile cache: code Pi runs at its next start")
	}

	if p := in.Project; p != "" {
		add(filepath.Join(p, ".mcp.json"), false, MCP, "the project's MCP configuration")
		add(filepath.Join(p, cfg), true, Pi, "the project's Pi folder: mcp.json, settings.json, extensions, packages Pi and the adapter load")
		watch(add(ProjectPolicy(p), false, Piagent, "the project's tool policy"))
		gds := gitDirs(p)
		out = append(out, gitFolders(gds)...)
		out = append(out, gitEntries(home, p, gds)...)
		out = append(out, OtherTools(p)...)
	}
	for _, c := range in.Consulted {
		add(c, false, MCP, "a file a configuration reader consults")
	}

	slices.SortStableFunc(out, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return slices.CompactFunc(out, func(a, b Entry) bool { return a.Path == b.Path })
}

// otherTools are other coding tools' files in a project whose content
// runs a program, unconfined, when the person next opens the project with
// that tool: written by the agent, they run later what its sandbox kept
// from running now.
var otherTools = []struct {
	rel  string
	dir  bool
	what string
}{
	{".claude", true, "Claude Code's project folder: its settings' hooks, apiKeyHelper and statusLine run programs, and enableAllProjectMcpServers starts .mcp.json's servers, when the person next runs Claude Code here"},
	{".cursor/mcp.json", false, "Cursor's project MCP servers: started when the person opens the project in Cursor"},
	{".cursor/hooks.json", false, "Cursor's project hooks: commands its agent runs at a session's start, before a shell command, after an edit"},
	{".gemini/settings.json", false, "Gemini CLI's project settings: its MCP servers and tool discovery commands"},
	{".codex/config.toml", false, "Codex's project configuration: its MCP servers and notify command"},
	{".vscode/tasks.json", false, "VS Code's tasks: one may run when the folder opens"},
	{".vscode/settings.json", false, "VS Code's workspace settings: the interpreters, tools and terminal profiles it runs"},
	{".opencode", true, "opencode's project folder: its plugins (.opencode/plugins), custom tools and package.json load, and its opencode.json(c) starts MCP servers, when the person next runs opencode here"},
	{"opencode.jsonc", false, "opencode's project configuration (JSONC): its MCP servers and plugins"},
	{".roo/mcp.json", false, "Roo Code's project MCP servers: started when the person opens the project with Roo Code"},
	{".kiro/settings/mcp.json", false, "Kiro's workspace MCP servers: started when the person opens the project in Kiro"},
	{".zed/settings.json", false, "Zed's project settings: its language servers' binaries and its context (MCP) servers"},
	{".gemini/extensions", true, "Gemini CLI's workspace extensions: their MCP servers start when the person next runs Gemini CLI here"},
	{".gemini/commands", true, "Gemini CLI's project commands: their shell steps run when the person calls one"},
	{".gemini/.env", false, "Gemini CLI's project environment: loaded into it, and into every server and command it starts"},
	{".kiro/hooks", true, "Kiro's agent hooks: commands it runs on the project's file events"},
	{".devcontainer", true, "the dev container's configuration: its initializeCommand runs on this machine when the person opens the project in a container"},
	{".devcontainer.json", false, "the dev container's configuration: its initializeCommand runs on this machine when the person opens the project in a container"},
}

// OtherTools are the registry's entries for the other coding tools' files
// in project (otherTools); the launcher's baseline watches them too.
func OtherTools(project string) []Entry {
	out := make([]Entry, 0, len(otherTools))
	for _, o := range otherTools {
		out = append(out, Entry{Path: filepath.Join(project, filepath.FromSlash(o.rel)), Dir: o.dir, Owner: Tools, What: o.what})
	}
	return out
}

// gitFolders are the registry's entries in each git folder of gds: what
// decides what git runs and reads for the person.
func gitFolders(gds []string) []Entry {
	out := make([]Entry, 0, 5*len(gds))
	for _, g := range gds {
		out = append(out,
			Entry{Path: filepath.Join(g, "hooks"), Dir: true, Owner: Git, What: "git hooks: code git runs for the person"},
			Entry{Path: filepath.Join(g, "config"), Owner: Git, What: "git config: aliases, hooks path and programs git runs"},
			Entry{Path: filepath.Join(g, "commondir"), Owner: Git, What: "git's common folder: where its config and hooks are read from"},
			Entry{Path: filepath.Join(g, "info"), Dir: true, Owner: Git, What: "git's info folder: attributes, excludes and sparse patterns"},
			Entry{Path: filepath.Join(g, "worktrees"), Dir: true, Owner: Git, What: "git's linked work trees: each with a gitdir and a config of its own"})
	}
	return out
}

// GitFolders are the registry's entries in project's own git folders (the
// .git folder, the one a .git file names, its common folder; not the
// submodules', whose settings the nested repositories' check reads), for
// the launcher's baseline, which watches those inside the project.
func GitFolders(project string) []Entry { return gitFolders(mainGitDirs(gitDirs(project))) }

// mainGitDirs are the git folders of gds that are not a submodule's (one
// below another's modules folder).
func mainGitDirs(gds []string) []string {
	var out []string
	for i, g := range gds {
		if !slices.ContainsFunc(gds[:i], func(m string) bool { return paths.Within(filepath.Join(m, "modules"), g) }) {
			out = append(out, g)
		}
	}
	return out
}

// gitDirs lists the git folders whose config and hooks decide what the
// person's next git command runs: the project's .git (or the folder a
// gitdir: file names), the common folder its commondir names, and each
// submodule's folder under modules/ (nested ones included), as far as they
// exist. The project's .git is listed even when absent.
func gitDirs(project string) []string {
	main := filepath.Join(project, ".git")
	out := []string{main}
	if fi, err := os.Lstat(main); err == nil && fi.Mode().IsRegular() && fi.Size() < 4096 {
		if b, err := safefile.Read(main, safefile.Options{Max: 4096}); err == nil {
			if t, ok := gitnest.ParseGitdir(b, project); ok {
				main = t
				out = append(out, main)
			}
		}
	}
	if b, err := safefile.Read(filepath.Join(main, "commondir"), safefile.Options{Max: 4096}); err == nil {
		out = append(out, absFrom(main, strings.TrimSpace(string(b))))
	}
	// submodules, bounded
	queue := []string{filepath.Join(main, "modules")}
	for n := 0; len(queue) > 0 && n < 256; n++ {
		dir := queue[0]
		queue = queue[1:]
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			sub := filepath.Join(dir, e.Name())
			if _, err := os.Lstat(filepath.Join(sub, "HEAD")); err == nil {
				out = append(out, sub)
				queue = append(queue, filepath.Join(sub, "modules"))
			} else {
				queue = append(queue, sub) // a submodule named a/b
			}
		}
	}
	return out
}

// gitConfigs reads the git config files that decide what the person's
// next git command runs for the project: the person's own (~/.gitconfig,
// ~/.config/git/config), each git folder's config, and every file those
// include ([include] and [includeIf] path, whatever the condition: a file
// protected too many is the safe side), and the files those include, as
// git does, to its depth of ten. A repository whose setup has git include
// a file of the work tree (include.path = ../.gitconfig, for shared diff
// and merge drivers) gives that file a config's power: a core.fsmonitor,
// core.pager, filter or alias there runs at the person's next git status.
// It returns the included files, every core.hooksPath value read, and
// every hook command the configs define (hook.<name>.command).
func gitConfigs(home, project string, gitDirs []string) (included, hooks, commands []string) {
	var files []string
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"))
	}
	for _, g := range gitDirs {
		files = append(files, filepath.Join(g, "config"), filepath.Join(g, "config.worktree"))
	}
	seen := map[string]bool{}
	type file struct {
		path  string
		depth int
	}
	queue := make([]file, 0, len(files))
	for _, f := range files {
		queue = append(queue, file{f, 0})
	}
	for len(queue) > 0 && len(seen) < 64 {
		f := queue[0]
		queue = queue[1:]
		if seen[f.path] {
			continue
		}
		seen[f.path] = true
		b, err := safefile.Read(f.path, safefile.Options{Max: 1 << 20})
		if err != nil {
			continue
		}
		for _, v := range gitnest.HooksPaths(b) {
			if h, ok := fromGit(home, project, v); ok {
				hooks = append(hooks, h) // a relative one from the top of the work tree
			}
		}
		commands = append(commands, gitnest.HookCommands(b)...)
		if f.depth >= 10 {
			continue
		}
		for _, v := range gitnest.Includes(b) {
			// a relative path from the including file's folder
			if inc, ok := fromGit(home, filepath.Dir(f.path), v); ok {
				included = append(included, inc)
				queue = append(queue, file{inc, f.depth + 1})
				// git reads where a link leads (a dotfiles layout's
				// .gitconfig -> tools/gitconfig): that file is config too
				if r, err := filepath.EvalSymlinks(inc); err == nil && r != inc {
					included = append(included, r)
				}
			}
		}
	}
	return included, hooks, commands
}

// fromGit is a path git reads in a config value: ~/ from home, ~NAME/
// from that user's home (the person's own by name among them), a relative
// one from dir; false for a ~ without a home or an unknown user.
func fromGit(home, dir, v string) (string, bool) {
	switch {
	case v == "~" || strings.HasPrefix(v, "~/"):
		return filepath.Join(home, v[1:]), home != ""
	case strings.HasPrefix(v, "~"):
		name, rest, _ := strings.Cut(v[1:], "/")
		h, ok := safefile.HomeOf(name)
		if !ok && home != "" && name == filepath.Base(home) {
			// a user /etc/passwd does not list (a directory service's),
			// named as the person's home is
			h, ok = home, true
		}
		if !ok {
			return "", false
		}
		return filepath.Join(h, rest), true
	default:
		return absFrom(dir, v), true
	}
}

// gitHooks are the names of the hooks git runs (githooks(5)).
var gitHooks = []string{"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
	"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge", "pre-push",
	"pre-receive", "update", "proc-receive", "post-receive", "post-update", "reference-transaction",
	"push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate", "fsmonitor-watchman",
	"p4-changelist", "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit", "post-index-change"}

// GitPaths are the registry's entries for what git reads beyond the git
// folder's config and hooks for project (gitEntries): each git folder's
// config.worktree, the hooks folders core.hooksPath names and the files
// git's config includes. The launcher's baseline watches those inside the
// project.
func GitPaths(home, project string) []Entry { return gitEntries(home, project, gitDirs(project)) }

// gitEntries registers each file gitConfigs finds included, and each hooks
// folder: the folder itself; with husky's layout (core.hooksPath =
// .husky/_, whose generated hooks run the scripts in .husky) its parent
// too; and, for a folder that is the project or holds it (hooksPath = .),
// only the hooks by name, so the project stays the agent's to write.
func gitEntries(home, project string, gitDirs []string) []Entry {
	const what = "git's hooks folder, named by core.hooksPath: code git runs for the person"
	var out []Entry
	for _, g := range gitDirs {
		// git sparse-checkout and per-worktree settings set
		// extensions.worktreeConfig; git then reads this file as config.
		// Absent, no mount can keep it: the launcher's baseline and the
		// session's integrity check watch it through GitPaths.
		out = append(out, Entry{Path: filepath.Join(g, "config.worktree"), Owner: Git, What: "git's per-worktree config, read as config where extensions.worktreeConfig is set (git sparse-checkout sets it)"})
	}
	if fi, err := os.Lstat(filepath.Join(project, ".git")); err == nil && !fi.IsDir() {
		// a linked work tree's or a submodule's: re-pointed, git reads
		// hooks and config from wherever it names
		out = append(out, Entry{Path: filepath.Join(project, ".git"), Owner: Git, What: "the .git file: git reads its hooks and config from the git folder it names"})
	}
	included, hooks, commands := gitConfigs(home, project, gitDirs)
	// the hooks of the project's own git folders (a submodule's run in
	// its own work tree, and .git/modules is the agent's to write)
	folders := make([]string, 0, len(gitDirs)+len(hooks))
	for _, g := range mainGitDirs(gitDirs) {
		folders = append(folders, filepath.Join(g, "hooks"))
	}
	out = append(out, managedHooks(project, append(folders, hooks...), commands)...)
	for _, f := range included {
		out = append(out, Entry{Path: f, Owner: Git, What: "a file git's config includes: its settings, like the config's own, run programs for the person"})
	}
	for _, h := range hooks {
		switch {
		case paths.Within(h, project):
			for _, n := range gitHooks {
				out = append(out, Entry{Path: filepath.Join(h, n), Owner: Git, What: "a hook by name in " + what})
			}
		case filepath.Base(h) == "_" && !paths.Within(filepath.Dir(h), project):
			out = append(out, Entry{Path: h, Dir: true, Owner: Git, What: what},
				Entry{Path: filepath.Dir(h), Dir: true, Owner: Git, What: "husky's scripts, which the hooks in its _ folder run"})
		default:
			out = append(out, Entry{Path: h, Dir: true, Owner: Git, What: what})
		}
	}
	return out
}

// managedHooks are the work-tree files that a hook manager's hooks read
// at every run: the hooks by name in folders (the git folders' hooks and
// those core.hooksPath names; a .sample is not run) and the hook commands
// git's config defines. For pre-commit's family (pre-commit, and prek, its
// drop-in): the configuration each names and the default ones. For
// lefthook: its configuration files, main and local, in each format and
// place it has read them from, and its script folders. At most 64 KiB of
// each hook is read. Rewritten by the agent, these run its commands at
// the person's next commit, as the hook itself would; what they run in
// turn (a local hook's script, a package's binary) is the project's code,
// which the agent may write (docs/sandbox.md says so).
func managedHooks(project string, folders, commands []string) []Entry {
	const (
		preWhat  = "pre-commit's configuration: the hook pre-commit (or prek) installed runs the commands it names at the person's next commit"
		leftWhat = "lefthook's configuration: the hooks lefthook installed run the commands it names at the person's next commit"
	)
	texts := commands[:min(len(commands), maxHookTexts)]
	for _, d := range folders {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !slices.Contains(gitHooks, e.Name()) {
				continue
			}
			if len(texts) == maxHookTexts {
				break
			}
			if b, err := safefile.Read(filepath.Join(d, e.Name()), safefile.Options{Max: 64 << 10}); err == nil {
				texts = append(texts, string(b))
			}
		}
	}
	var out []Entry
	lefthook := false
	for _, t := range texts {
		for _, cfg := range preCommitConfigs(t) {
			out = append(out, Entry{Path: absFrom(project, cfg), Owner: Git, What: preWhat})
		}
		lefthook = lefthook || strings.Contains(t, "lefthook")
	}
	if lefthook {
		for _, rel := range lefthookFiles() {
			out = append(out, Entry{Path: filepath.Join(project, rel), Owner: Git, What: leftWhat})
		}
		out = append(out,
			Entry{Path: filepath.Join(project, ".lefthook"), Dir: true, Owner: Git, What: "lefthook's scripts, which its hooks run"},
			Entry{Path: filepath.Join(project, ".lefthook-local"), Dir: true, Owner: Git, What: "lefthook's local scripts, which its hooks run"})
	}
	return out
}

// maxHookTexts bounds the hooks and hook commands managedHooks reads, and
// maxNamed the configurations one of them may name (pre-commit's name
// one): a planted hook of many -c words costs a few entries, not
// thousands, in every command's registry.
const (
	maxHookTexts = 64
	maxNamed     = 4
)

// lefthookFiles are the names lefthook reads its configuration from,
// relative to the top of the work tree: lefthook and lefthook-local, with
// a leading dot or without, in the project and (without) in .config, as
// YAML, TOML, JSON or JSONC; before 1.9 also in every format its
// configuration library took (viper: properties, HCL, dotenv, INI…), in
// the project alone.
func lefthookFiles() []string {
	var out []string
	for _, base := range []string{"lefthook", "lefthook-local"} {
		for _, ext := range []string{"yml", "yaml", "toml", "json", "jsonc"} {
			out = append(out, base+"."+ext, "."+base+"."+ext, filepath.Join(".config", base+"."+ext))
		}
		for _, ext := range []string{"properties", "props", "prop", "hcl", "tfvars", "dotenv", "env", "ini"} {
			out = append(out, base+"."+ext, "."+base+"."+ext)
		}
	}
	return out
}

// preCommitMarks tell a hook of pre-commit's family: pre-commit's generated
// line, the ID its hooks have carried since 1.x, its hook-impl command and
// Python module, prek's generated line, and either run from a hook of the
// person's own.
var preCommitMarks = []string{"File generated by pre-commit", "138fd403232d2ddd5efb44317e38bf03", "hook-impl", "pre_commit", "File generated by prek", "pre-commit run", "prek run"}

// preCommitConfigs are the configurations a hook (or a hook command) of
// pre-commit's family reads: the ones it names (--config=X, --config X,
// -c X in any line, quoted as the shell or Python quotes; CONFIG = 'X' in
// the Python hooks before 2.0) and the defaults pre-commit and prek look
// for; none for any other hook.
func preCommitConfigs(hook string) []string {
	if !slices.ContainsFunc(preCommitMarks, func(m string) bool { return strings.Contains(hook, m) }) {
		return nil
	}
	defaults := []string{".pre-commit-config.yaml", ".pre-commit-config.yml", "prek.toml"}
	out := defaults
	for _, line := range strings.Split(hook, "\n") {
		if len(out) >= len(defaults)+maxNamed {
			break
		}
		if !strings.Contains(line, "-c") && !strings.Contains(line, "CONFIG") {
			continue
		}
		w := words(line)
		for i, f := range w {
			next := ""
			if i+1 < len(w) {
				next = w[i+1]
			}
			switch {
			case strings.HasPrefix(f, "--config="):
				out = append(out, strings.TrimPrefix(f, "--config="))
			case f == "--config" || f == "-c":
				out = append(out, next)
			case f == "CONFIG" && next == "=" && i+2 < len(w):
				out = append(out, w[i+2])
			}
			if len(out) >= len(defaults)+maxNamed {
				break
			}
		}
	}
	out = slices.DeleteFunc(out, func(c string) bool { return c == "" || c == "None" })
	return out[:min(len(out), len(defaults)+maxNamed)]
}

// words splits a line of a hook into words as the shell would a line of
// plain words, and Python a list: blanks, commas, brackets and
// parentheses separate; quotes ('…', "…") and a backslash keep what they
// hold (pre-commit quotes an argument with a blank in it).
func words(s string) []string {
	var out []string
	var w strings.Builder
	in := false // a word is open
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			w.WriteRune(r)
			escaped = false
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case r == '\\':
			escaped, in = true, true
		case r == '\'' || r == '"':
			quote, in = r, true
		case strings.ContainsRune(" \t,[]()", r):
			if in {
				out = append(out, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, w.String())
	}
	return out
}

func absFrom(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// Set is a registry prepared for lookups.
type Set struct {
	entries []Entry
	files   []string          // sorted paths of file entries
	lower   map[string]string // lower-cased path → path, for case-folding file systems
	dirs    []string          // folder entries
	ldirs   []string          // the same, lower-cased
}

// NewSet prepares entries for Match.
func NewSet(entries []Entry) *Set {
	s := &Set{entries: entries, lower: make(map[string]string, len(entries))}
	for _, e := range entries {
		if e.Dir {
			s.dirs = append(s.dirs, e.Path)
			s.ldirs = append(s.ldirs, strings.ToLower(e.Path))
		} else {
			s.files = append(s.files, e.Path)
		}
		s.lower[strings.ToLower(e.Path)] = e.Path
	}
	slices.Sort(s.files)
	return s
}

// Match reports the registered path p is, or lies beneath. p must be clean
// and absolute.
func (s *Set) Match(p string) (string, bool) {
	if _, ok := slices.BinarySearch(s.files, p); ok {
		return p, true
	}
	lp := strings.ToLower(p)
	if f, ok := s.lower[lp]; ok {
		return f, true
	}
	for i, d := range s.dirs {
		if paths.Within(d, p) || paths.Within(s.ldirs[i], lp) {
			return d, true
		}
	}
	return "", false
}

// Holds reports a registered path that lies beneath p (p is an ancestor of
// it): renaming, removing or replacing p changes that entry.
func (s *Set) Holds(p string) (string, bool) {
	for _, e := range s.entries {
		if e.Path != p && paths.Within(p, e.Path) {
			return e.Path, true
		}
	}
	return "", false
}

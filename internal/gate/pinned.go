package gate

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/piagent/piagent/internal/digest"
	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/paths"
)

// lockfiles are pinned beside a local package's package.json.
var lockfiles = []string{"package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock", "bun.lockb", "bun.lock"}

// pinned lists the project files a definition runs and, since a file it
// runs loads others (a require, an import), every file of that file's
// package: the nearest folder up to the project holding a package manifest
// (manifests), or the project itself, node_modules included (issue 38,
// item 6). An argument to a command that is not an interpreter (a data
// file, a folder to serve) is pinned alone. Code outside the project (an
// npx package) is not a file here; its catalogue pin and version stand for
// it.
func (in *Input) pinned(e mcpconfig.Entry) []PinnedFile {
	project := in.View.Cwd
	base := in.baseDir(e)
	var found, code, roots []string
	var consider func(s string, isCommand, isCode bool)
	treeOfDir := false // while set, a folder pins every file beneath it
	consider = func(s string, isCommand, isCode bool) {
		if s == "" || strings.Contains(s, "://") || strings.HasPrefix(s, "!") {
			return
		}
		if !isCommand {
			// args and env values are interpolated by the adapter; the
			// command is taken literally.
			if s = in.interpolate(s); s == "" {
				return
			}
		}
		if isCommand && !strings.Contains(s, "/") {
			return // found on PATH, outside the project
		}
		p := paths.AbsFrom(base, paths.Expand(in.View.Home, s))
		if !paths.Within(project, p) || p == project {
			return
		}
		fi, err := in.FS.Stat(p)
		if err != nil {
			return
		}
		if fi.IsDir() {
			if treeOfDir {
				// A folder on PYTHONPATH or NODE_PATH is code the server
				// loads: pinned whole, its folders watched, so a new
				// json.py there is seen (not a bounded list of its files).
				roots = append(roots, p)
				return
			}
			pkg := in.packageFiles(p)
			if isCode && len(pkg) > 0 {
				roots = append(roots, p) // a local package it runs
			}
			found = append(found, pkg...)
			return
		}
		found = append(found, p)
		if isCode {
			code = append(code, p)
		}
	}
	cmd, _ := e["command"].(string)
	consider(cmd, true, true)
	interpreter := scriptRunner(filepath.Base(cmd))
	if args, ok := e["args"].([]any); ok {
		for _, a := range args {
			s, ok := a.(string)
			if !ok {
				continue
			}
			if strings.HasPrefix(s, "-") {
				if _, v, ok := strings.Cut(s, "="); ok {
					consider(v, false, interpreter)
				}
				continue
			}
			consider(s, false, interpreter)
		}
	}
	// Code-loading variables (NODE_OPTIONS --require, LD_PRELOAD, PYTHONPATH,
	// …) run the files and folders they name: those are pinned too.
	if env, ok := e["env"].(map[string]any); ok {
		for k, v := range env {
			val, _ := v.(string)
			files, dirs := CodePaths(k, val)
			for _, f := range files {
				consider(f, false, true)
			}
			treeOfDir = true
			for _, d := range dirs {
				consider(d, false, true)
			}
			treeOfDir = false
		}
	}
	// requestHeadersCommand and ! values (env, headers, bearerToken,
	// oauth.clientSecret) are run by the adapter itself, in Pi's working
	// directory: the project files they name are code of the server too.
	for _, f := range in.commandValueFiles(e) {
		found = append(found, f)
		code = append(code, f)
	}
	if base != project && paths.Within(project, base) {
		found = append(found, in.packageFiles(base)...)
	}
	// Runners piagent understands pin what they run; anything else that
	// runs from the working tree pins the whole tree under its cwd.
	runFiles, explained := in.runnerFiles(e, base)
	found = append(found, runFiles...)
	// npx and npm exec run a bin of the package's name from the project's
	// node_modules when one is there, before the registry, and read the
	// project's .npmrc: those paths are pinned, present or not, and a
	// local copy of the package whole.
	npxFiles, npxRoots := in.npxLocal(e, base)
	found = append(found, npxFiles...)
	roots = append(roots, npxRoots...)
	// python -m and -c put the working directory first on sys.path: a
	// module there shadows the one meant, the standard library's too.
	if pythonCwdFirst(e) && paths.Within(project, base) {
		roots = append(roots, base)
	}
	code = append(code, runFiles...)
	cmdInProject := strings.Contains(cmd, "/") && paths.Within(project, paths.Abs(base, paths.Expand(in.View.Home, cmd)))
	if !explained && interpreter && !cmdInProject {
		explained = true // an interpreter and the script it names: pinned above
	}
	_, explicitCwd := e["cwd"].(string)
	if !explained && (cmdInProject || len(found) > 0 || explicitCwd && paths.Within(project, base)) {
		tree := base
		if !paths.Within(project, base) {
			tree = project
		}
		roots = append(roots, tree)
	}
	for _, f := range code {
		if paths.Within(project, f) {
			pkg := in.packageRoot(project, filepath.Dir(f))
			roots = append(roots, pkg)
			// Node looks for a package in every node_modules from the
			// package's folder up (a workspace hoists them to the root),
			// with no path in the code naming it.
			for d := filepath.Dir(pkg); paths.Within(project, d); d = filepath.Dir(d) {
				if fi, err := in.FS.Stat(filepath.Join(d, "node_modules")); err == nil && fi.IsDir() {
					roots = append(roots, filepath.Join(d, "node_modules"))
				}
				if d == project || d == filepath.Dir(d) {
					break
				}
			}
		}
	}
	// A root reached through a link is walked where it really is: WalkDir
	// does not enter a link, and the code loads the files there.
	for i, r := range roots {
		real, inside := realIn(project, r)
		if !inside {
			found = append(found, filepath.Join(r, treeLinkedOut))
			continue
		}
		roots[i] = real
	}
	trees := outermost(roots)
	var skip func(string, bool) bool
	if len(trees) > 0 { // made for a tree to walk only: most servers have none
		skip = in.notCode(project)
	}
	for i := 0; i < len(trees); i++ { // trees grows with the folders links lead to
		tree := trees[i]
		files, links, ok := walkPinned(tree, maxPinnedTree, skip)
		found = append(found, files...)
		if !ok {
			found = append(found, filepath.Join(tree, treeTooLarge))
		}
		// A link in the package to elsewhere in the project is pinned by
		// its text, and the code loads what is there: that is pinned too,
		// a file by its content, a folder walked like the package. (A link
		// out of the project stays pinned by its text: docs/sandbox.md.)
		for _, l := range links {
			real, inside := realIn(project, l)
			if !inside || real == l || slices.ContainsFunc(trees, func(t string) bool { return paths.Within(t, real) }) {
				continue
			}
			switch fi, err := os.Stat(real); {
			case err != nil:
			case fi.IsDir() && len(trees) < maxLinkedTrees:
				trees = append(trees, real)
			case fi.IsDir():
				found = append(found, filepath.Join(real, treeTooLarge))
			case fi.Mode().IsRegular():
				found = append(found, real)
			}
		}
	}
	slices.Sort(found)
	found = slices.Compact(found)
	if len(trees) > 0 && onDisk(in.FS) {
		// A whole tree: its digests are kept between processes too.
		loadTreeCache(in.View.Home)
		defer saveTreeCache(in.View.Home, settledReads.Load())
	}
	out := make([]PinnedFile, len(found))
	for i, p := range found {
		rel, _ := filepath.Rel(project, p)
		out[i].Path = filepath.ToSlash(rel)
	}
	if onDisk(in.FS) {
		fileDigests(found, out)
	} else {
		for i, p := range found {
			if data, err := in.FS.ReadFile(p); err == nil {
				out[i].Digest = digest.Bytes(data)
			}
		}
	}
	// Sorted by the path as shown, which pinnedAt's search relies on.
	slices.SortFunc(out, func(a, b PinnedFile) int { return byPath(a, b.Path) })
	for _, tree := range trees {
		in.treePins = append(in.treePins, tree)
		rel, _ := filepath.Rel(project, tree)
		for i := range out {
			if p := filepath.Join(project, filepath.FromSlash(out[i].Path)); paths.Within(tree, p) {
				out[i].Tree = filepath.ToSlash(rel)
				break
			}
		}
	}
	return out
}

// manifests mark a package's root: what its code may load lies beneath.
var manifests = []string{"package.json", "deno.json", "deno.jsonc", "pyproject.toml", "setup.py", "setup.cfg", "go.mod", "Cargo.toml", "Gemfile", "composer.json"}

// packageRoot is the nearest folder from dir up to project that holds a
// package manifest, or project.
func (in *Input) packageRoot(project, dir string) string {
	for d := dir; paths.Within(project, d); d = filepath.Dir(d) {
		for _, m := range manifests {
			if fi, err := in.FS.Stat(filepath.Join(d, m)); err == nil && !fi.IsDir() {
				return d
			}
		}
		if d == project || d == filepath.Dir(d) {
			break
		}
	}
	return project
}

// outermost drops every folder inside another of the list.
func outermost(dirs []string) []string {
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	var out []string
	for _, d := range dirs {
		if len(out) > 0 && paths.Within(out[len(out)-1], d) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// notCode are the files in the project a tree pin leaves out: git's folder
// (watched by the session's record), the project's Pi folder (likewise, and
// it holds the adapter's project file), and every MCP configuration file
// the gate reads there: the definition's own digest covers its entry, and
// another server's entry, or the person's add of one, is not this server's
// code.
func (in *Input) notCode(project string) func(p string, dir bool) bool {
	files := map[string]bool{}
	for _, l := range in.View.Layers {
		if paths.Within(project, l.Path) {
			files[l.Path] = true
		}
	}
	for _, t := range in.View.ImportTargets {
		if paths.Within(project, t.Path) {
			files[t.Path] = true
		}
	}
	piDir := filepath.Join(project, in.View.ConfigDir)
	gitDir := filepath.Join(project, ".git")
	return func(p string, dir bool) bool {
		if dir {
			// the project's own .git alone: a .git folder inside a
			// package (vendor/x/.git) holds files like any other
			return p == gitDir || p == piDir
		}
		return files[p]
	}
}

// TooLarge says what keeps a server's code from being pinned, or "": a
// tree past maxPinnedTree files, or a file past maxPinnedFile bytes. Such a
// server cannot be approved: a pin of part of its code would leave the rest
// free to change.
func (s *Server) TooLarge() string {
	for _, p := range s.Pinned {
		dir, base := path.Split(p.Path)
		if dir = strings.TrimSuffix(dir, "/"); dir == "" {
			dir = "the project"
		}
		switch base {
		case treeTooLarge:
			return fmt.Sprintf("%s holds more than %d files", dir, maxPinnedTree)
		case treeUnlisted:
			return fmt.Sprintf("the folder %s cannot be listed", dir)
		case treeLinkedOut:
			return fmt.Sprintf("%s is a link to a folder outside the project", dir)
		}
		if p.Digest == fileTooLarge {
			return fmt.Sprintf("%s is larger than %d MiB", p.Path, maxPinnedFile>>20)
		}
		if p.Digest == fileUnreadable {
			return fmt.Sprintf("%s cannot be read", p.Path)
		}
		if !utf8.ValidString(p.Path) {
			// The approval store is JSON: such a name would be kept
			// altered and never match, asking again for ever.
			return fmt.Sprintf("%q has a name that is not UTF-8", p.Path)
		}
	}
	return ""
}

// fileTooLarge is the digest of a pinned file past maxPinnedFile, and
// fileUnreadable of one piagent cannot read.
const (
	fileTooLarge   = "too-large"
	fileUnreadable = "unreadable"
)

// treeTooLarge stands for the files past maxPinnedTree: it never exists, so
// the pin never matches and the server asks again (fail closed).
// treeUnlisted stands for the files of a folder that could not be listed
// (walkPinned), treeLinkedOut for those of a folder the package reaches
// through a link out of the project. Server.TooLarge names each.
const (
	treeTooLarge  = ".piagent-tree-too-large"
	treeUnlisted  = ".piagent-folder-unlisted"
	treeLinkedOut = ".piagent-linked-out"
)

// realIn resolves links in dir: the same folder as a path beneath project
// (project's own path kept), and whether it is inside the project at all.
func realIn(project, dir string) (string, bool) {
	r, err := filepath.EvalSymlinks(dir)
	if err != nil || r == dir {
		return dir, true
	}
	rp, err := filepath.EvalSymlinks(project)
	if err != nil || !paths.Within(rp, r) {
		return dir, false
	}
	rel, err := filepath.Rel(rp, r)
	if err != nil {
		return dir, false
	}
	return filepath.Join(project, rel), true
}

// CodePaths returns the files and the folders a code-loading environment
// variable makes a process load: NODE_OPTIONS --require/-r/--import/
// --loader operands, LD_PRELOAD entries, the scripts BASH_ENV, ENV,
// PYTHONSTARTUP and the GIT_* programs name, a -javaagent jar, RUBYOPT -r
// files; and the folders of PYTHONPATH, NODE_PATH, PERL5LIB, RUBYLIB,
// LD_LIBRARY_PATH, DYLD_*, GIT_EXEC_PATH, GIT_TEMPLATE_DIR and PATH.
func CodePaths(name, value string) (files, dirs []string) {
	if value == "" {
		return nil, nil
	}
	switch name {
	case "NODE_OPTIONS":
		fields := strings.Fields(value)
		for i := 0; i < len(fields); i++ {
			f := fields[i]
			for _, opt := range []string{"--require", "-r", "--import", "--loader", "--experimental-loader"} {
				if f == opt && i+1 < len(fields) {
					files = append(files, fields[i+1])
					i++
				} else if v, ok := strings.CutPrefix(f, opt+"="); ok {
					files = append(files, v)
				}
			}
		}
	case "LD_PRELOAD", "LD_AUDIT":
		files = append(files, strings.FieldsFunc(value, func(r rune) bool { return r == ':' || r == ' ' })...)
	case "BASH_ENV", "ENV", "PYTHONSTARTUP", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_EDITOR",
		"GIT_PAGER", "GIT_EXTERNAL_DIFF", "GIT_PROXY_COMMAND", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "EDITOR", "VISUAL", "PAGER":
		if f := strings.Fields(value); len(f) > 0 { // blank: nothing to run
			files = append(files, f[0])
		}
	case "RUBYOPT":
		for _, f := range strings.Fields(value) {
			if v, ok := strings.CutPrefix(f, "-r"); ok && v != "" {
				files = append(files, v)
			}
		}
	case "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS":
		for _, f := range strings.Fields(value) {
			if v, ok := strings.CutPrefix(f, "-javaagent:"); ok {
				jar, _, _ := strings.Cut(v, "=")
				files = append(files, jar)
			}
		}
	case "PYTHONPATH", "NODE_PATH", "PERL5LIB", "PERLLIB", "RUBYLIB", "LD_LIBRARY_PATH", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "PATH":
		dirs = append(dirs, filepath.SplitList(value)...)
	default:
		if strings.HasPrefix(name, "DYLD_") {
			dirs = append(dirs, filepath.SplitList(value)...)
		}
	}
	return files, dirs
}

func (in *Input) packageFiles(dir string) []string {
	manifest := filepath.Join(dir, "package.json")
	if fi, err := in.FS.Stat(manifest); err != nil || fi.IsDir() {
		return nil
	}
	out := []string{manifest}
	for _, l := range lockfiles {
		p := filepath.Join(dir, l)
		if fi, err := in.FS.Stat(p); err == nil && !fi.IsDir() {
			out = append(out, p)
		}
	}
	return out
}

// PinnedPaths returns the absolute paths of every file the gate pinned, for
// the cache signature.
func (g *Gate) PinnedPaths() []string {
	var out []string
	for _, s := range g.Servers {
		for _, p := range s.Pinned {
			abs := filepath.Join(g.View.Cwd, filepath.FromSlash(p.Path))
			if strings.HasPrefix(p.Digest, linkDigest) {
				abs = filepath.Dir(abs) // its folder's stamp stands for it
			}
			out = append(out, abs)
		}
	}
	return out
}

// npxLocal is what `npx SPEC`, `npm exec|x SPEC` and `bunx SPEC` run from
// the working tree instead of the registry: npm exec first looks for
// node_modules/.bin/<the first positional as written> in the folder it
// runs in and every folder above, and takes a package of that name already
// in a local node_modules tree. Every such path from base up to the
// project is pinned (a missing one pinned as missing, so that one that
// appears later asks again), and a package folder found there is pinned
// whole.
func (in *Input) npxLocal(e mcpconfig.Entry, base string) (files, roots []string) {
	cmd, _ := e["command"].(string)
	var args []string
	if list, ok := e["args"].([]any); ok {
		for _, a := range list {
			if s, ok := a.(string); ok {
				args = append(args, s)
			}
		}
	}
	switch filepath.Base(cmd) {
	case "npx", "bunx", "pnpx":
	case "npm", "pnpm", "yarn", "bun":
		pos := positional(args)
		if len(pos) == 0 || (pos[0] != "exec" && pos[0] != "x" && pos[0] != "dlx") {
			return nil, nil
		}
	default:
		return nil, nil
	}
	project := in.View.Cwd
	if !paths.Within(project, base) {
		return nil, nil
	}
	var names []string
	for i, a := range args {
		switch {
		case (a == "-p" || a == "--package") && i+1 < len(args):
			names = append(names, args[i+1])
		case strings.HasPrefix(a, "--package="):
			names = append(names, strings.TrimPrefix(a, "--package="))
		case strings.HasPrefix(a, "-"), a == "exec", a == "x", a == "dlx":
		default:
			names = append(names, a)
		}
	}
	var bins, pkgs []string
	for _, n := range names {
		if n == "" || strings.Contains(n, "://") || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "/") {
			continue
		}
		bins = append(bins, n)
		name := n
		if at := strings.LastIndex(n, "@"); at > 0 {
			name = n[:at]
		}
		bins = append(bins, name, path.Base(name))
		pkgs = append(pkgs, name)
	}
	for d := base; paths.Within(project, d); d = filepath.Dir(d) {
		// The package manager's project settings: npm's node-options and
		// script-shell, yarn's yarnPath, bun's preload, pnpm's hooks.
		for _, f := range []string{".npmrc", ".yarnrc", ".yarnrc.yml", "bunfig.toml", ".pnpmfile.cjs"} {
			files = append(files, filepath.Join(d, f))
		}
		nm := filepath.Join(d, "node_modules")
		for _, b := range bins {
			if p := filepath.Join(nm, ".bin", filepath.FromSlash(b)); paths.Within(nm, p) {
				files = append(files, p)
			}
		}
		for _, n := range pkgs {
			p := filepath.Join(nm, filepath.FromSlash(n))
			if !paths.Within(nm, p) {
				continue
			}
			if fi, err := in.FS.Stat(p); err == nil && fi.IsDir() {
				roots = append(roots, p)
			} else {
				files = append(files, filepath.Join(p, "package.json"))
			}
		}
		if d == project || d == filepath.Dir(d) {
			break
		}
	}
	return files, roots
}

// npxLocalHit names (project-relative) the first file or folder in the
// project that npx would take for e's package, or "".
func (in *Input) npxLocalHit(e mcpconfig.Entry) string {
	files, roots := in.npxLocal(e, in.baseDir(e))
	for _, p := range append(roots, files...) {
		if in.exists(p) || onDisk(in.FS) && lexists(p) {
			rel, _ := filepath.Rel(in.View.Cwd, p)
			return filepath.ToSlash(rel)
		}
	}
	return ""
}

func (in *Input) exists(p string) bool {
	if in.FS == nil {
		return false
	}
	_, err := in.FS.Stat(p)
	return err == nil
}

func lexists(p string) bool { _, err := os.Lstat(p); return err == nil }

// pythonCwdFirst reports a python command run with -m or -c, which puts
// its working directory first on sys.path (unless PYTHONSAFEPATH is set in
// the definition).
func pythonCwdFirst(e mcpconfig.Entry) bool {
	cmd, _ := e["command"].(string)
	if !strings.HasPrefix(filepath.Base(cmd), "python") {
		return false
	}
	if env, ok := e["env"].(map[string]any); ok {
		if v, _ := env["PYTHONSAFEPATH"].(string); v != "" {
			return false
		}
	}
	list, _ := e["args"].([]any)
	for _, a := range list {
		s, _ := a.(string)
		if s == "-m" || s == "-c" || (strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") && (strings.HasSuffix(s, "m") || strings.HasSuffix(s, "c"))) {
			return true
		}
		if !strings.HasPrefix(s, "-") {
			return false // a script: its own folder comes first, not the cwd
		}
	}
	return false
}

// pythonLocalHit names (project-relative) a module in the working
// directory of a python -m/-c server that the import system finds before
// any installed one (a .py, a compiled module or a package), or "".
func (in *Input) pythonLocalHit(e mcpconfig.Entry) string {
	base := in.baseDir(e)
	if !pythonCwdFirst(e) || !paths.Within(in.View.Cwd, base) || !onDisk(in.FS) {
		return ""
	}
	in.FS.Stat(base) // consulted: a module added later changes its stamp
	ents, err := os.ReadDir(base)
	if err != nil {
		rel, _ := filepath.Rel(in.View.Cwd, base)
		return filepath.ToSlash(rel) + " (cannot be listed)"
	}
	for _, d := range ents {
		n := d.Name()
		switch ext := filepath.Ext(n); {
		case ext == ".py" || ext == ".pyc" || ext == ".so" || ext == ".pyd":
		case d.IsDir() || d.Type()&os.ModeSymlink != 0:
			if !lexists(filepath.Join(base, n, "__init__.py")) && !lexists(filepath.Join(base, n, "__init__.pyc")) {
				continue
			}
		default:
			continue
		}
		rel, _ := filepath.Rel(in.View.Cwd, filepath.Join(base, n))
		return filepath.ToSlash(rel)
	}
	return ""
}

// commandValueFiles are the project files that a definition's
// requestHeadersCommand (its command, and its arguments when the command
// runs scripts) and its ! command values name, resolved against the
// project, where the adapter runs them.
func (in *Input) commandValueFiles(e mcpconfig.Entry) []string {
	project := in.View.Cwd
	var out []string
	file := func(s string) {
		if s = in.interpolate(s); s == "" || strings.Contains(s, "://") {
			return
		}
		p := paths.AbsFrom(project, paths.Expand(in.View.Home, s))
		if p == project || !paths.Within(project, p) {
			return
		}
		if fi, err := in.FS.Stat(p); err == nil {
			if fi.IsDir() {
				out = append(out, in.localPackage(p)...)
			} else {
				out = append(out, p)
			}
		}
	}
	if r, ok := e["requestHeadersCommand"].(map[string]any); ok {
		cmd, _ := r["command"].(string)
		if strings.Contains(cmd, "/") {
			file(cmd)
		}
		if list, ok := r["args"].([]any); ok {
			for _, a := range list {
				if s, ok := a.(string); ok {
					if _, v, ok := strings.Cut(s, "="); ok && strings.HasPrefix(s, "-") {
						s = v
					}
					file(s)
				}
			}
		}
		if env, ok := r["env"].(map[string]any); ok {
			for k, v := range env {
				val, _ := v.(string)
				files, _ := CodePaths(k, val)
				for _, f := range files {
					file(f)
				}
			}
		}
	}
	bang := func(v any) {
		if s, ok := v.(string); ok && strings.HasPrefix(s, "!") && !strings.HasPrefix(s, "!!") {
			out = append(out, in.namedFiles(s[1:], project)...)
		}
	}
	for _, k := range []string{"env", "headers"} {
		if m, ok := e[k].(map[string]any); ok {
			for _, v := range m {
				bang(v)
			}
		}
	}
	bang(e["bearerToken"])
	if o, ok := e["oauth"].(map[string]any); ok {
		bang(o["clientSecret"])
	}
	return out
}

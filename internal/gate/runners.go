package gate

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/piagent/piagent/internal/digest"
	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/safefile"
)

// A definition runs code from the working tree in more ways than naming a
// script. runnerFiles knows the common runners and returns what each runs:
// explained is false when the definition runs from the project in a way no
// rule explains, and then the whole tree under its cwd is pinned.

// maxPinnedTree bounds a whole-tree pin; past it the tree counts as one
// that changed (fail closed), and the preview says so.
var maxPinnedTree = 50000 // a variable for the tests

// runnerFiles returns the project files the definition's runner executes,
// resolved against base, and whether a rule explained the definition.
func (in *Input) runnerFiles(e mcpconfig.Entry, base string) (files []string, explained bool) {
	cmd, _ := e["command"].(string)
	var args []string
	if list, ok := e["args"].([]any); ok {
		for _, a := range list {
			if s, ok := a.(string); ok {
				args = append(args, s)
			}
		}
	}
	name := filepath.Base(cmd)
	at := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(base, p)
	}
	exists := func(p string) bool { _, err := in.FS.Stat(p); return err == nil }
	isDir := func(p string) bool { fi, err := in.FS.Stat(p); return err == nil && fi.IsDir() }
	switch name {
	case "npm", "pnpm", "yarn", "bun":
		// `npm start`, `npm run x`, `pnpm x`, `yarn x`, `bun run x`, and
		// `pnpm dlx ./pkg`: the script line and the files it names.
		pos := positional(args)
		if name == "bun" && len(pos) > 0 && isDir(at(pos[0])) {
			return in.localPackage(at(pos[0])), true
		}
		if name == "pnpm" && len(pos) > 1 && pos[0] == "dlx" {
			return in.localPackage(at(pos[1])), true
		}
		if len(pos) > 0 && (pos[0] == "exec" || pos[0] == "x") {
			return nil, false
		}
		script := ""
		switch {
		case len(pos) > 1 && (pos[0] == "run" || pos[0] == "run-script"):
			script = pos[1]
		case len(pos) > 0:
			script = pos[0]
		}
		manifest := filepath.Join(base, "package.json")
		files = append(files, manifest)
		if line := scriptLine(in, manifest, script); line != "" {
			files = append(files, in.namedFiles(line, base)...)
		}
		return files, true
	case "npx", "bunx":
		for _, a := range positional(args) {
			if strings.HasPrefix(a, ".") || strings.HasPrefix(a, "/") {
				if isDir(at(a)) {
					return in.localPackage(at(a)), true
				}
			}
		}
	case "node", "deno", "nodejs":
		if a := positional(args); len(a) > 0 && isDir(at(a[0])) {
			return in.localPackage(at(a[0])), true
		}
	case "make", "gmake", "just", "task":
		file := map[string][]string{"make": {"GNUmakefile", "makefile", "Makefile"}, "gmake": {"GNUmakefile", "makefile", "Makefile"},
			"just": {"justfile", "Justfile", ".justfile"}, "task": {"Taskfile.yml", "Taskfile.yaml", "taskfile.yml"}}[name]
		for i, a := range args {
			if (a == "-f" || a == "--file" || a == "--justfile" || a == "-t" || a == "--taskfile") && i+1 < len(args) {
				file = []string{args[i+1]}
			}
		}
		for _, f := range file {
			if p := at(f); exists(p) {
				data, _ := in.FS.ReadFile(p)
				return append([]string{p}, in.namedFiles(string(data), filepath.Dir(p))...), true
			}
		}
		return nil, true
	case "uv", "poetry", "pipenv", "hatch", "pdm", "rye":
		for _, f := range []string{"pyproject.toml", "uv.lock", "poetry.lock", "Pipfile", "Pipfile.lock", "pdm.lock"} {
			if p := filepath.Join(base, f); exists(p) {
				files = append(files, p)
			}
		}
		pos := positional(args)
		if len(pos) > 1 && pos[0] == "run" {
			sub, subFiles := pos[1:], []string(nil)
			subFiles, _ = in.runnerFiles(mcpconfig.Entry{"command": sub[0], "args": toAny(sub[1:])}, base)
			files = append(files, subFiles...)
			files = append(files, in.namedFiles(strings.Join(sub, " "), base)...)
		}
		return files, true
	}
	// Interpreters given code: the files the code names; python -m: the module.
	for i, a := range args {
		switch {
		case (a == "-c" || a == "-e" || a == "--eval" || a == "-p") && i+1 < len(args) && isInterpreter(name):
			return in.namedFiles(args[i+1], base), true
		case a == "-m" && i+1 < len(args) && strings.HasPrefix(name, "python"):
			mod := filepath.Join(base, filepath.FromSlash(strings.ReplaceAll(args[i+1], ".", "/")))
			for _, p := range []string{mod + ".py", filepath.Join(mod, "__main__.py"), filepath.Join(mod, "__init__.py")} {
				if exists(p) {
					files = append(files, p)
				}
			}
			return files, true
		}
	}
	return nil, false
}

func isInterpreter(name string) bool {
	switch name {
	case "sh", "bash", "zsh", "dash", "ksh", "node", "nodejs", "deno", "bun", "python", "python3", "perl", "ruby", "php":
		return true
	}
	return strings.HasPrefix(name, "python3.")
}

// scriptCapable are the programs whose file argument is the whole of what
// they run as far as the existing script pin goes.
func scriptRunner(name string) bool {
	return isInterpreter(name) || name == "tsx" || name == "ts-node"
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// positional drops options (words starting with "-").
func positional(args []string) []string {
	var out []string
	for _, a := range args {
		if a == "--" {
			continue
		}
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	return out
}

// scriptLine reads scripts[name] of a package.json.
func scriptLine(in *Input, manifest, name string) string {
	data, err := in.FS.ReadFile(manifest)
	if err != nil || name == "" {
		return ""
	}
	var m struct {
		Scripts map[string]string `json:"scripts"`
	}
	if json.Unmarshal(data, &m) != nil {
		return ""
	}
	line := m.Scripts[name]
	if pre, ok := m.Scripts["pre"+name]; ok {
		line = pre + " && " + line
	}
	return line
}

// namedFiles are the words of a command line (or a makefile) that name a
// regular file inside the project, resolved against base; a folder named
// there pins its package.
func (in *Input) namedFiles(text, base string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == ';' || r == '&' || r == '|' || r == '"' || r == '\'' || r == '(' || r == ')' || r == '='
	}) {
		if w == "" || strings.HasPrefix(w, "-") || strings.Contains(w, "://") || strings.HasPrefix(w, "$") {
			continue
		}
		p := w
		if !filepath.IsAbs(p) {
			p = filepath.Join(base, p)
		}
		p = filepath.Clean(p)
		if p == in.View.Cwd || !paths.Within(in.View.Cwd, p) {
			continue
		}
		fi, err := in.FS.Stat(p)
		switch {
		case err != nil:
		case fi.IsDir():
			out = append(out, in.localPackage(p)...)
		default:
			out = append(out, p)
		}
	}
	return out
}

// localPackage is a local package's manifest and lockfile plus what it runs:
// the bin entries and the main/exports target.
func (in *Input) localPackage(dir string) []string {
	out := in.packageFiles(dir)
	data, err := in.FS.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		if p := filepath.Join(dir, "index.js"); in.isFile(p) {
			out = append(out, p)
		}
		return out
	}
	var m struct {
		Main    string `json:"main"`
		Bin     any    `json:"bin"`
		Exports any    `json:"exports"`
	}
	_ = json.Unmarshal(data, &m)
	var targets []string
	switch b := m.Bin.(type) {
	case string:
		targets = append(targets, b)
	case map[string]any:
		for _, v := range b {
			if s, ok := v.(string); ok {
				targets = append(targets, s)
			}
		}
	}
	main := m.Main
	if main == "" {
		main = "index.js"
	}
	targets = append(targets, main)
	var walkExports func(v any)
	walkExports = func(v any) {
		switch x := v.(type) {
		case string:
			targets = append(targets, x)
		case map[string]any:
			for _, e := range x {
				walkExports(e)
			}
		}
	}
	walkExports(m.Exports)
	for _, t := range targets {
		if p := filepath.Join(dir, filepath.FromSlash(t)); paths.Within(dir, p) && in.isFile(p) {
			out = append(out, p)
		}
	}
	return out
}

func (in *Input) isFile(p string) bool {
	fi, err := in.FS.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// walkPinned lists the regular files beneath dir, bounded, leaving out
// what skip names (a folder skips its whole tree).
func walkPinned(dir string, limit int, skip func(p string, dir bool) bool) (files, links []string, ok bool) {
	ok = true
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			// A folder that cannot be listed (chmod 311) may hold files
			// the code loads by name: it stands for them, and no approval
			// holds while it is there (Server.TooLarge).
			files = append(files, filepath.Join(p, treeUnlisted))
			return nil
		}
		if skip(p, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		// A link is listed too, pinned by where it points (fileDigest):
		// a new one beside a file the code loads (config.js beside the
		// config.json it required) can take that file's place.
		if d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0 {
			if len(files) >= limit {
				ok = false
				return filepath.SkipAll
			}
			files = append(files, p)
			if d.Type()&fs.ModeSymlink != 0 {
				links = append(links, p)
			}
		}
		return nil
	})
	return files, links, ok
}

// maxLinkedTrees bounds the folders elsewhere in the project that links in
// a package lead to, each walked and pinned like the package; past it the
// server cannot be approved (treeTooLarge).
const maxLinkedTrees = 64

// linkDigest is the prefix of a symbolic link's digest: what it points to
// (the link's text), not the content there. Changing a link's text means
// replacing the link, which changes its folder, so a link needs no stamp of
// its own in a gate's signature (PinnedPaths leaves it out, and the watch
// stays on).
const linkDigest = "symlink:"

// hashCache remembers a file's digest by what stat says of it
// (safefile.Stamp: size, inode, modification and change times). A hit
// costs one stat; any change to the file changes its change time, and a
// stamp too recent to tell two writes apart is not trusted (Settled).
var hashCache digestCache

// digestCache is a map of path → cachedHash that many goroutines may use
// (the digests of a large pin are taken in parallel).
type digestCache struct {
	mu sync.RWMutex
	m  map[string]cachedHash
}

func (c *digestCache) load(p string) (cachedHash, bool) {
	c.mu.RLock()
	h, ok := c.m[p]
	c.mu.RUnlock()
	return h, ok
}

func (c *digestCache) store(p string, h cachedHash) {
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]cachedHash{}
	}
	c.m[p] = h
	c.mu.Unlock()
}

// add keeps every entry of more whose path it does not know yet.
func (c *digestCache) add(more map[string]cachedHash) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) == 0 {
		c.m = more
		return
	}
	for p, h := range more {
		if _, ok := c.m[p]; !ok {
			c.m[p] = h
		}
	}
}

func (c *digestCache) clear() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}

// each calls fn for every entry until fn returns false; fn must not use c.
func (c *digestCache) each(fn func(p string, h cachedHash) bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for p, h := range c.m {
		if !fn(p, h) {
			return
		}
	}
}

type cachedHash struct {
	key    safefile.Stamp
	digest string
}

// maxPinnedFile is the largest file whose digest a pin takes; past it,
// and for a file piagent cannot read, the server cannot be approved
// (Server.TooLarge).
var maxPinnedFile int64 = 256 << 20 // a variable for the tests

// fileDigests sets out[i].Digest to fileDigest(paths[i]). A whole-tree
// pin holds thousands of files, each a stat at least (a read when the
// cache has no settled digest): past a few hundred they are taken by one
// goroutine per processor, in runs of digestRun.
func fileDigests(paths []string, out []PinnedFile) {
	workers := min(runtime.GOMAXPROCS(0), (len(paths)+digestRun-1)/digestRun, 8)
	if workers <= 1 {
		for i, p := range paths {
			out[i].Digest = fileDigest(p)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				end := int(next.Add(digestRun))
				start := end - digestRun
				if start >= len(paths) {
					return
				}
				for i := start; i < min(end, len(paths)); i++ {
					out[i].Digest = fileDigest(paths[i])
				}
			}
		})
	}
	wg.Wait()
}

// digestRun is the number of files one goroutine of fileDigests takes at
// a time.
const digestRun = 256

// fileDigest is the digest of p's content, from the cache when stat says
// nothing changed; "" when p cannot be read.
func fileDigest(p string) string {
	fi, err := os.Lstat(p)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		t, err := os.Readlink(p)
		if err != nil {
			return ""
		}
		return linkDigest + digest.Bytes([]byte(t))
	}
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	key := safefile.FromInfo(fi)
	if c, ok := hashCache.load(p); ok && key.Settled() {
		if c.key == key {
			return c.digest
		}
	}
	digestReads.Add(1)
	// Streamed, not read whole: a large pin's files are digested by
	// several goroutines at once, and a file may be as large as
	// maxPinnedFile.
	sum, err := safefile.Sum(p, safefile.Options{Max: maxPinnedFile})
	if errors.Is(err, safefile.ErrTooLarge) {
		return fileTooLarge // no approval holds while it is there (Server.TooLarge)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		// Not read, it could change unseen (a file made write-only, then
		// rewritten): refused like one too large.
		return fileUnreadable
	}
	if err != nil {
		return ""
	}
	d := digest.Sum(sum)
	// A stamp too recent to tell two writes apart may, once settled, be
	// the stamp of another content written in the same tick: kept only
	// when settled already.
	if key.Settled() {
		hashCache.store(p, cachedHash{key: key, digest: d})
		settledReads.Add(1)
	}
	return d
}

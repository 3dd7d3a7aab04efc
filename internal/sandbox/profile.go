// Package sandbox confines the commands an agent runs, and the servers
// piagent starts, with the operating system: Landlock, a seccomp filter and,
// where the platform allows one, a private mount namespace on Linux
// (Seatbelt on macOS is described from the same Profile).
//
// A Profile is the portable description: what may be written, which
// registered paths inside those writable folders must stay read-only, which
// protected files are hidden, and which environment the command gets. It is
// derived from the registry and the project, never from the repository.
// Exec applies a profile to the current process and replaces it with the
// command, so every descendant inherits the confinement.
package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/registry"
)

// Profile is what a confined command may do.
type Profile struct {
	// Name is "agent" or "server".
	Name string `json:"name"`
	// Writable are the folders the command may write beneath; everything
	// else is read-only.
	Writable []string `json:"writable"`
	// ReadOnly are registered paths that exist inside a writable folder:
	// they are mounted read-only where a mount namespace is available.
	ReadOnly []string `json:"readOnly"`
	// Pinned are the folders between a writable folder and a ReadOnly path:
	// they are made mount points so that they cannot be renamed, removed
	// or replaced.
	Pinned []string `json:"pinned"`
	// Unprotected are registered paths inside a writable folder that do not
	// exist yet, with no existing folder that could be made read-only in
	// their place: the command could create them. The guard's reading of
	// commands still stops the usual ways, and the gate still treats what
	// appears there as unapproved.
	Unprotected []string `json:"unprotected"`
	// Hidden are protected files (secrets) inside a writable folder that are
	// replaced by an empty file where a mount namespace is available;
	// HiddenDirs likewise by an empty folder.
	Hidden     []string `json:"hidden"`
	HiddenDirs []string `json:"hiddenDirs"`
	// Denied are secret files and folders outside the writable folders that
	// the command may not read (the registry's secret entries).
	Denied []string `json:"denied"`
	// Absent are the secret stores outside the writable folders that do
	// not exist yet. Mounts hide a name only while the file behind it
	// stays: Landlock keeps every folder on the way to a Denied or Absent
	// path listable alone, and reads only beneath the entries it held when
	// the command started, so a store a person's tool creates, or renames
	// over, while the command runs (bash's history at a shell's exit, gh's
	// hosts.yml at a login) stays unreadable too.
	Absent []string `json:"absent,omitempty"`
	// Listed are partly readable folders outside the writable ones
	// (~/.config/git): Landlock reads only beneath the entries they held
	// at the start, as the folders on the way to a Denied path.
	Listed []string `json:"listed,omitempty"`
	// Env are KEY=VALUE pairs set for the command: TMPDIR and the private
	// package caches.
	Env []string `json:"env"`
	// NoUnixSockets refuses socket(AF_UNIX) (socketpair stays): a confined
	// command cannot ask an unconfined daemon to do its work.
	NoUnixSockets bool `json:"noUnixSockets"`
	// NetworkOff takes the network away: where a namespace is made, the
	// command gets a network namespace with only its own loopback (the
	// machine's services on 127.0.0.1 and ::1, and its abstract Unix
	// sockets, out of reach); where none can be, seccomp refuses every
	// socket. Either way vsock, which no namespace separates, is refused.
	// Set it with SetNetworkOff, which also tells Go not to try.
	NetworkOff bool `json:"networkOff,omitempty"`
	// Registries gives the command the network through piagent's proxy
	// alone ("network": "registries"): a network namespace with its own
	// loopback and a listener on 127.0.0.1 served from outside by the
	// proxy, which dials the package registries and AllowHosts; or, where
	// no namespace can be made, Landlock letting TCP connect only to the
	// proxy's port and seccomp refusing UDP. HTTP(S)_PROXY and NO_PROXY
	// are set for the command.
	Registries bool `json:"registries,omitempty"`
	// AllowHosts are the hosts the proxy reaches beyond the registries
	// (HOST, HOST:PORT, *.DOMAIN): the person's allowHosts and, for a
	// server, its --net grants. A loopback entry (127.0.0.1:5432) is a
	// port of this machine's forwarded into the namespace.
	AllowHosts []string `json:"allowHosts,omitempty"`
	// NetLog is the file the proxy appends its refusals to, and NetWho
	// names the caller in it ("agent" or "server NAME").
	NetLog string `json:"netLog,omitempty"`
	NetWho string `json:"netWho,omitempty"`
	// Protected is every registered path, wherever it lies: a platform that
	// can deny a path inside an allowed folder (Seatbelt) denies writes to
	// each of them.
	Protected []Path `json:"protected"`
}

// Path is a file (Dir false) or a folder and everything beneath it.
type Path struct {
	Path string `json:"path"`
	Dir  bool   `json:"dir,omitempty"`
}

// Input is what a profile is derived from.
type Input struct {
	Home, AgentDir, Project, ConfigDir string
	// TempDir is the system temporary folder (os.TempDir()).
	TempDir string
	// Getenv reads the environment the command would get, for the user's
	// own cache locations.
	Getenv func(string) string
	// Registry is the registry for this home and project.
	Registry []registry.Entry
	// Extra are further writable folders (a person's grants).
	Extra []string
	// User names the private folder's owner ("" is this process's uid).
	User string
	// Secrets are the person's secret stores (policy.SecretStores: the
	// home's credential files and folders the policy keeps from every
	// tool), hidden from the agent's commands and from servers alike.
	Secrets []string
	// PartlyReadable are the folders of which the policy opens some files
	// alone (policy.PartlyReadable): what appears in them later is not.
	PartlyReadable []string
}

// hiddenNames are the protected files inside the project that a confined
// command may not read: secrets the repository's own tests never need.
var hiddenNames = []string{".env*", "*.pem", "*.key", "id_rsa*", "id_ed25519*", ".npmrc", ".netrc"}

// allowedNames stay readable although they match hiddenNames.
var allowedNames = []string{".env.example", ".env.sample", ".env.template"}

// PrivateDir is the per-project folder holding a confined command's private
// temporary folder and caches, beneath the system temporary folder.
func PrivateDir(tempDir, user, project string) string {
	if user == "" {
		user = strconvUID()
	}
	sum := sha256.Sum256([]byte(project))
	return filepath.Join(tempDir, "piagent-sandbox-"+user, hex.EncodeToString(sum[:8]))
}

// Agent derives the profile for the commands the agent runs. The system
// temporary folders are not among its writable folders: Pi's extension
// loader and Node's compile cache keep code there that unconfined processes
// load later. TMPDIR is its private folder, at the same path for Pi's own
// tools. The secret stores are hidden, but those beneath a folder a person
// granted the agent's commands for reading in this project.
func Agent(in Input, readGrants []string) Profile {
	return derive(in, "agent", append([]string{in.Project, shmDir()}, in.Extra...),
		PrivateDir(in.TempDir, in.User, in.Project), false, granted(in.Secrets, readGrants), granted(in.PartlyReadable, readGrants))
}

// granted are the secret stores not within a folder granted for reading;
// a grant of a folder within a store (~/.kube/work in ~/.kube) leaves the
// store hidden whole.
func granted(secrets, readGrants []string) []string {
	return slices.DeleteFunc(slices.Clone(secrets), func(s string) bool {
		return slices.ContainsFunc(readGrants, func(g string) bool { return paths.Within(filepath.Clean(g), s) })
	})
}

// shmDir is /dev/shm as a real path (a link to /run/shm on some systems):
// the sandbox opens its folders without following links.
func shmDir() string {
	if r, err := filepath.EvalSymlinks("/dev/shm"); err == nil {
		return r
	}
	return "/dev/shm"
}

// Server derives the profile of one stdio server piagent starts: it writes
// the project, a private folder of its own (TMPDIR, and package caches no
// other server shares) and the folders a person granted; it never reads the
// user's credential stores, Pi's auth.json, the adapter's tokens or the
// approval store, except what a person granted for reading; it writes no
// registered file and reaches no Unix socket.
func Server(in Input, name string, readGrants, writeGrants []string) Profile {
	// Not under the temporary folder: the agent's commands may write there,
	// and a server's package cache is code the server runs. piagent's own
	// folder is in the registry, so no agent command writes it.
	private := serverPrivateDir(in, name)
	p := derive(in, "server", append([]string{in.Project, shmDir()}, writeGrants...), private, true, in.Secrets, in.PartlyReadable)
	for _, g := range readGrants {
		keep := func(x string) bool { return paths.Within(filepath.Clean(g), x) }
		p.Hidden = slices.DeleteFunc(p.Hidden, keep)
		p.HiddenDirs = slices.DeleteFunc(p.HiddenDirs, keep)
		p.Denied = slices.DeleteFunc(p.Denied, keep)
		p.Absent = slices.DeleteFunc(p.Absent, keep)
		p.Listed = slices.DeleteFunc(p.Listed, keep)
	}
	return p
}

func serverPrivateDir(in Input, name string) string {
	return PrivateDir(filepath.Join(registry.OwnDir(in.Home), "sandbox"), in.User, in.Project+"\x00server\x00"+name)
}

// ServerStateDir is where piagent, outside the sandbox, keeps what it saw
// of server name's last run (its exit, the tail of its stderr): beside the
// server's private folder, in piagent's own folder, which the server
// cannot write.
func ServerStateDir(in Input, name string) string { return serverPrivateDir(in, name) + ".state" }

// derive builds a profile: writable roots, the private folder, whether
// piagent's own secret (the approval store) is hidden too, and further
// secret paths to hide.
func derive(in Input, name string, writable []string, private string, hideOwn bool, secrets, partial []string) Profile {
	p := Profile{Name: name, NoUnixSockets: true}
	p.Writable = clean(writable)
	p.Env = cacheEnv(private, in)

	set := registry.NewSet(in.Registry)
	for _, e := range in.Registry {
		p.Protected = append(p.Protected, Path{Path: e.Path, Dir: e.Dir})
	}
	hide := func(path string) {
		// A registered path is the registry's to decide (the approval
		// store stays readable to the agent's piagent-mcp list); a store
		// holding a writable folder (a project beneath ~/.mozilla) cannot
		// be hidden whole without hiding the project.
		// A store that is a link (a dotfiles manager's) is hidden where
		// it leads, which the mounts reach without following a link.
		if _, reg := set.Match(path); reg {
			return
		}
		if _, err := os.Lstat(path); err != nil {
			// most stores are absent: one stat each; what appears there
			// later stays unreadable (Absent)
			if paths.Within(in.Home, path) && !slices.ContainsFunc(p.Writable, func(w string) bool { return paths.Within(path, w) || paths.Within(w, path) }) {
				p.Absent = append(p.Absent, path)
			}
			return
		}
		if r, err := filepath.EvalSymlinks(path); err == nil {
			path = r
		}
		if slices.ContainsFunc(p.Writable, func(w string) bool { return paths.Within(path, w) }) {
			return
		}
		if fi, err := os.Stat(path); err == nil && !inAny(p.Writable, path) {
			// Landlock keeps the stores in the home (rules for each entry
			// of each folder on the way: the home, ~/.config); one
			// elsewhere (/etc/shadow, which root alone reads, and root has
			// namespaces) is hidden by a mount alone, as is one this user
			// cannot read anyway.
			if paths.Within(in.Home, path) && !unreadable(path) {
				p.Denied = append(p.Denied, path)
			}
			if fi.IsDir() {
				p.HiddenDirs = append(p.HiddenDirs, path)
			} else {
				p.Hidden = append(p.Hidden, path)
			}
		}
	}
	for _, sp := range secrets {
		hide(sp)
	}
	for _, d := range partial {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		if !slices.ContainsFunc(p.Writable, func(w string) bool { return paths.Within(d, w) || paths.Within(w, d) }) {
			p.Listed = append(p.Listed, d)
		}
	}
	for _, e := range in.Registry {
		// Credentials (Pi's auth.json, the adapter's OAuth tokens) are
		// hidden; piagent's own store stays readable to piagent-mcp list
		// run by the agent, not to a server.
		if !e.Secret || e.Owner == registry.Piagent && !hideOwn {
			continue
		}
		if fi, err := os.Stat(e.Path); err == nil && !inAny(p.Writable, e.Path) {
			p.Denied = append(p.Denied, e.Path)
			if fi.IsDir() {
				p.HiddenDirs = append(p.HiddenDirs, e.Path)
			} else {
				p.Hidden = append(p.Hidden, e.Path)
			}
		}
	}
	for _, e := range in.Registry {
		root, ok := rootOf(p.Writable, e.Path)
		if !ok {
			continue
		}
		path := e.Path
		if t, ok := linkedEntry(e); ok {
			// A registered path that is a link the person made (a linked
			// .devcontainer, a .vscode/settings.json from their dotfiles):
			// no mount can hold the link itself, whose folder the command
			// may write (the session's watch sees it replaced); what it
			// leads to is locked where a command could write it, and is
			// read-only already anywhere else. Any other link is left to
			// the mount, which refuses it, naming it.
			p.Unprotected = append(p.Unprotected, e.Path)
			if root, ok = rootOf(p.Writable, t); !ok {
				continue
			}
			path = t
		}
		if _, err := os.Lstat(path); err == nil {
			p.ReadOnly = append(p.ReadOnly, path)
			p.Pinned = append(p.Pinned, between(root, path)...)
			if e.Secret && e.Owner != registry.Piagent {
				if e.Dir {
					p.HiddenDirs = append(p.HiddenDirs, path)
				} else {
					p.Hidden = append(p.Hidden, path)
				}
			}
			continue
		}
		// Missing: make its nearest existing folder read-only, unless that
		// folder is a writable root or the project itself (the command's
		// own workspace).
		anc := nearestExisting(filepath.Dir(path))
		if anc == "" || slices.Contains(p.Writable, anc) || anc == in.Project || !paths.Within(root, anc) {
			p.Unprotected = append(p.Unprotected, path)
			continue
		}
		if _, reg := set.Match(anc); !reg && !ownedFolder(in, anc) {
			p.Unprotected = append(p.Unprotected, path)
			continue
		}
		p.ReadOnly = append(p.ReadOnly, anc)
		p.Pinned = append(p.Pinned, between(root, anc)...)
	}
	p.Hidden = append(p.Hidden, secretsIn(in.Project)...)
	p.ReadOnly = compact(p.ReadOnly)
	p.Pinned = compact(p.Pinned)
	p.Hidden = compact(p.Hidden)
	p.HiddenDirs = compact(p.HiddenDirs)
	p.Unprotected = compact(p.Unprotected)
	p.Denied = compact(p.Denied)
	p.Absent = compact(p.Absent)
	p.Listed = compact(p.Listed)
	return p
}

// ownedFolder reports folders that hold only what piagent, Pi or the
// adapter keep, which a confined command never needs to write: ~/.pi, the
// agent dir, ~/.config/mcp, and the import kinds' own folders.
func ownedFolder(in Input, dir string) bool {
	if dir == filepath.Join(in.Home, ".pi") || dir == in.AgentDir || dir == filepath.Join(in.Home, ".config", "mcp") {
		return true
	}
	for _, f := range registry.ImportFiles(in.Home, "") {
		if filepath.Dir(f) == dir && dir != in.Home {
			return true
		}
	}
	return false
}

// cacheEnv points every package manager's cache at a private folder, so a
// confined command never writes a cache an unconfined process later runs
// code from. Go may still read the user's module downloads, as a file://
// proxy.
func cacheEnv(private string, in Input) []string {
	get := in.Getenv
	if get == nil {
		get = func(string) string { return "" }
	}
	env := []string{
		"TMPDIR=" + filepath.Join(private, "tmp"),
		"GOCACHE=" + filepath.Join(private, "go-build"),
		"GOMODCACHE=" + filepath.Join(private, "gomod"),
		"npm_config_cache=" + filepath.Join(private, "npm"),
		"YARN_CACHE_FOLDER=" + filepath.Join(private, "yarn"),
		"PNPM_HOME=" + filepath.Join(private, "pnpm"),
		"UV_CACHE_DIR=" + filepath.Join(private, "uv"),
		"PIP_CACHE_DIR=" + filepath.Join(private, "pip"),
		"XDG_CACHE_HOME=" + filepath.Join(private, "cache"),
		// Python keeps its compiled modules there too, not in __pycache__
		// beside the source: a server's own run would otherwise add files
		// to the package its approval pins (issue 38, item 6), and an agent's
		// python would leave .pyc files a server later loads.
		"PYTHONPYCACHEPREFIX=" + filepath.Join(private, "pycache"),
	}
	mod := get("GOMODCACHE")
	if mod == "" {
		gopath := get("GOPATH")
		if gopath == "" {
			gopath = filepath.Join(in.Home, "go")
		}
		mod = filepath.Join(strings.Split(gopath, string(os.PathListSeparator))[0], "pkg", "mod")
	}
	proxy := get("GOPROXY")
	if proxy == "" {
		proxy = "https://proxy.golang.org,direct"
	}
	if _, err := os.Stat(filepath.Join(mod, "cache", "download")); err == nil {
		proxy = "file://" + filepath.Join(mod, "cache", "download") + "," + proxy
	}
	env = append(env, "GOPROXY="+proxy, "GOFLAGS="+strings.TrimSpace(get("GOFLAGS")+" -modcacherw"))
	return env
}

// SetNetworkOff sets NetworkOff and, when it is off, makes GOPROXY end in
// "off" after the person's module downloads (a file:// proxy): a missing
// module fails at once with "module lookup disabled by GOPROXY=off", not
// with a refused connection to proxy.golang.org.
func (p *Profile) SetNetworkOff(off bool) {
	p.NetworkOff = off
	if !off {
		return
	}
	for i, kv := range p.Env {
		v, ok := strings.CutPrefix(kv, "GOPROXY=")
		if !ok {
			continue
		}
		proxy := "off"
		if first, _, _ := strings.Cut(v, ","); strings.HasPrefix(first, "file://") {
			proxy = first + ",off"
		}
		p.Env[i] = "GOPROXY=" + proxy
	}
}

// OwnNetwork reports a profile whose command gets a network namespace of
// its own: the network off, or through the proxy.
func (p Profile) OwnNetwork() bool { return p.NetworkOff || p.Registries }

// Dirs lists the private folders a profile's environment names; Exec
// creates them before confining.
func (p Profile) Dirs() []string {
	var out []string
	for _, kv := range p.Env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "TMPDIR", "GOCACHE", "GOMODCACHE", "npm_config_cache", "YARN_CACHE_FOLDER", "PNPM_HOME", "UV_CACHE_DIR", "PIP_CACHE_DIR", "XDG_CACHE_HOME":
			out = append(out, v)
		}
	}
	return out
}

// secretsIn finds the protected files in the project: a bounded walk that
// skips dependency and VCS folders.
func secretsIn(project string) []string {
	if project == "" {
		return nil
	}
	var out []string
	seen := 0
	_ = filepath.WalkDir(project, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		seen++
		if seen > 20000 {
			return filepath.SkipAll
		}
		name := d.Name()
		if d.IsDir() {
			if p != project && (name == "node_modules" || name == ".git" || name == "vendor" || name == ".venv" || name == "target") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 || !d.Type().IsRegular() {
			return nil
		}
		if Secret(name) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// Secret reports whether a file name is a protected secret inside a
// project.
func Secret(name string) bool {
	if slices.Contains(allowedNames, name) {
		return false
	}
	for _, pat := range hiddenNames {
		if ok, _ := filepath.Match(pat, name); ok {
			return true
		}
	}
	return false
}

func clean(ps []string) []string {
	var out []string
	for _, p := range ps {
		if p != "" {
			out = append(out, filepath.Clean(p))
		}
	}
	return compact(out)
}

func compact(ps []string) []string {
	slices.Sort(ps)
	return slices.Compact(ps)
}

func rootOf(roots []string, p string) (string, bool) {
	best := ""
	for _, r := range roots {
		if paths.Within(r, p) && len(r) > len(best) {
			best = r
		}
	}
	return best, best != ""
}

func inAny(roots []string, p string) bool {
	_, ok := rootOf(roots, p)
	return ok
}

// linkedEntry is where registry entry e leads when it is a symbolic link
// (its last component; not a secret, which is hidden as it was) straight
// to a path that exists: the link's text, from the link's folder, must
// name the path with no link on the way and no "..", so that what the
// mount locks is what the link leads to, with every folder on the way
// pinned, and the only thing a command could re-point is the link itself,
// which the session's watch records. false otherwise: a chain of links, a
// link to nothing yet (what a command made there no watch would see), a
// link through a folder that is one; the mount then refuses it, naming it.
func linkedEntry(e registry.Entry) (string, bool) {
	if e.Secret {
		return "", false
	}
	if fi, err := os.Lstat(e.Path); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return "", false
	}
	text, err := os.Readlink(e.Path)
	if err != nil || slices.Contains(strings.Split(filepath.ToSlash(text), "/"), "..") {
		return "", false
	}
	t := text
	if !filepath.IsAbs(t) {
		t = filepath.Join(filepath.Dir(e.Path), t)
	}
	t = filepath.Clean(t)
	if r, err := filepath.EvalSymlinks(t); err != nil || r != t {
		return "", false
	}
	if r, err := filepath.EvalSymlinks(filepath.Dir(e.Path)); err != nil || r != filepath.Dir(e.Path) {
		return "", false
	}
	return t, true
}

// between lists the folders strictly between root and p.
func between(root, p string) []string {
	var out []string
	for d := filepath.Dir(p); d != root && paths.Within(root, d) && d != filepath.Dir(d); d = filepath.Dir(d) {
		out = append(out, d)
	}
	return out
}

func nearestExisting(p string) string {
	for ; ; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
		if p == filepath.Dir(p) {
			return ""
		}
	}
}

func strconvUID() string { return strconv.Itoa(max(os.Getuid(), 0)) }

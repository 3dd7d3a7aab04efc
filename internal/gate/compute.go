package gate

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/piagent/piagent/internal/approval"
	"github.com/piagent/piagent/internal/digest"
	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/safefile"
	"github.com/piagent/piagent/internal/secret"
	"github.com/piagent/piagent/internal/toolname"
)

// FS is the file system the gate looks at for PATH lookups and pinned files.
type FS interface {
	Stat(name string) (fs.FileInfo, error)
	ReadFile(name string) ([]byte, error)
}

// Input is everything Compute needs. The zero Getenv has no variables.
type Input struct {
	View     *mcpconfig.View
	Store    *approval.Data // nil when there is no store or it cannot be used
	StoreErr error          // the store exists but cannot be used
	Project  string         // project key (approval.ProjectKey of the cwd)
	Getenv   func(string) string
	FS       FS
	// Optional names the variables a server may leave unset (a preset's
	// optional API key); nil means none.
	Optional func(server string) []string

	onPath   map[[2]string]bool // PATH lookups made so far, by command name and folder
	treePins []string           // folders pinned whole
	// newFS, when set, makes the FS for a run of servers, FS being nil:
	// Compute then judges a large view's servers side by side, each run
	// with its own (Load sets it).
	newFS func(servers int) FS
	// reuse, when set, holds each server's pinned files from the gate this
	// one refreshes (Gate.afterEdits): their list is kept and only the
	// files in changed are digested again.
	reuse   map[*mcpconfig.Server][]PinnedFile
	changed map[string]bool
	stamps  map[string]safefile.Stamp // changed's new stamps
	// prev, set with reuse, is each server as the refreshed gate judged
	// it: one no changed file touches is kept, and one whose approval
	// was compared file by file is compared again for the changed files
	// alone (Input.refreshed).
	prev map[*mcpconfig.Server]*Server
}

// sideBySide is how many servers make judging them side by side worth
// starting threads for.
const sideBySide = 256

func (in *Input) getenv(k string) string {
	if in.Getenv == nil {
		return ""
	}
	return in.Getenv(k)
}

// Compute decides the state of every server and the full-block states.
func Compute(in Input) *Gate {
	v := in.View
	g := &Gate{Project: in.Project, View: v, StoreErr: in.StoreErr}
	direct := parseDirectEnv(in.getenv("MCP_DIRECT_TOOLS"))
	g.Servers = make([]Server, len(v.Servers))
	if workers := min(runtime.GOMAXPROCS(0), 4); in.newFS != nil && workers > 1 && len(v.Servers) >= sideBySide {
		g.consulted = in.serversSideBySide(g.Servers, direct, workers)
	} else {
		if in.newFS != nil {
			in.FS = in.newFS(len(v.Servers))
		}
		for i := range v.Servers {
			g.Servers[i] = in.server(&v.Servers[i], direct)
		}
		if f, ok := in.FS.(*snapFS); ok && in.newFS != nil {
			g.consulted = f.consulted()
		}
	}
	g.Blocks = in.blocks(g, direct)
	g.Warnings = in.warnings(g)
	g.TreePins = in.treePins
	return g
}

// serversSideBySide judges the view's servers into out in runs, one a
// goroutine, each with its own file system memory and PATH lookups (the
// only state judging a server changes); the folders pinned whole are
// gathered in the servers' order, as one goroutine would have.
func (in *Input) serversSideBySide(out []Server, direct directEnv, workers int) (consulted []string) {
	v := in.View
	parts := make([]Input, workers)
	var wg sync.WaitGroup
	for w := range parts {
		lo, hi := len(out)*w/workers, len(out)*(w+1)/workers
		part := &parts[w]
		*part = *in
		part.FS, part.onPath, part.treePins = in.newFS(hi-lo), nil, nil
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				out[i] = part.server(&v.Servers[i], direct)
			}
		}()
	}
	wg.Wait()
	for i := range parts {
		in.treePins = append(in.treePins, parts[i].treePins...)
		if f, ok := parts[i].FS.(*snapFS); ok {
			consulted = append(consulted, f.consulted()...)
		}
	}
	in.FS = parts[0].FS // for what Compute looks at after
	return consulted
}

func (in *Input) server(cs *mcpconfig.Server, direct directEnv) Server {
	if prev, ok := in.prev[cs]; ok {
		if s, ok := in.refreshed(prev); ok {
			return s
		}
	}
	s := Server{Name: cs.Name, Config: cs, Repository: cs.RepositoryControlled}
	s.Prefix = toolname.EffectiveMode(cs.Entry["toolPrefix"], in.View.Settings["toolPrefix"])
	s.DirectTools = direct.enabled(cs.Name, cs.Entry, in.View.Settings)
	if !s.Repository {
		if hit := in.npxLocalHit(cs.Entry); hit != "" {
			s.Repository = true
			s.LocalCode = npxHitReason(hit)
		} else if hit := in.pythonLocalHit(cs.Entry); hit != "" {
			s.Repository = true
			s.LocalCode = "your own definition, but python -m/-c imports from its working directory first, and the project has " + hit
		}
	}
	if s.Repository {
		s.Fragment = Fragment(cs)
		if s.LocalCode != "" {
			e := maps.Clone(cs.Entry)
			delete(e, "disabled")
			delete(e, "enabled")
			s.Fragment = map[string]any{"source": "project-code", "entry": e}
		}
		d, err := digest.Of(s.Fragment)
		if err != nil {
			// Canonical JSON of decoded JSON cannot fail; if it ever does,
			// no decision can match, which blocks.
			d = "sha256:unavailable"
		}
		s.Digest = d
		if prev, ok := in.reuse[cs]; ok {
			s.Pinned = in.repin(prev)
		} else {
			s.Pinned = in.pinned(cs.Entry)
		}
	}
	name := cs.Name
	switch {
	case cs.Entry["disabled"] == true:
		s.State, s.Reason = Disabled, "disabled in "+disabledIn(cs)
		s.Fix = run(step("enable", name))
		return s
	case s.Repository && in.switchedOff(name):
		s.State, s.Reason = Disabled, "switched off for this project by piagent-mcp disable"
		s.Fix = run(step("enable", name))
		return s
	case s.Repository:
		if st, reason, fix, decided := in.decision(&s); decided {
			s.State, s.Reason, s.Fix = st, reason, fix
			if st != "" {
				return s
			}
		}
	}
	return in.usable(s)
}

// usable is the rest of a server's judgement once no approval blocks it:
// its command on PATH, its variables, its login.
func (in *Input) usable(s Server) Server {
	cs, name := s.Config, s.Name
	if cmd, ok := in.missingCommand(cs.Entry); ok {
		s.State, s.Command = NeedsCommand, cmd
		s.Reason = fmt.Sprintf("%s is not on PATH", cmd)
		s.Fix = Fix{Text: "install " + cmd + " or put it on PATH"}
		return s
	}
	if vars := in.missingEnv(cs.Name, cs.Entry); len(vars) > 0 {
		s.State, s.MissingEnv = NeedsEnv, vars
		s.Reason = strings.Join(vars, ", ") + notSet(len(vars))
		s.Fix = Fix{Text: "export " + vars[0] + "=…"}
		return s
	}
	if isOAuth(cs.Entry) {
		s.State, s.Reason, s.Fix = OAuth, "signs in through Pi; piagent cannot tell whether the login is current", Fix{Text: "/mcp-auth " + name}
		return s
	}
	s.State, s.Reason, s.Fix = Ready, "ready", Fix{}
	return s
}

func notSet(n int) string {
	if n == 1 {
		return " is not set"
	}
	return " are not set"
}

// switchedOff reports the person's own switch for a repository server
// (approval.Decision.Off): kept outside the repository, and applied by
// the launcher and the guard as a disabled entry would be.
func (in *Input) switchedOff(name string) bool {
	if in.Store == nil {
		return false
	}
	dec, ok := in.Store.Peek(in.Project, name)
	return ok && dec.Off
}

// decision applies the approval store to a repository server. It returns a
// blocking state, or "" (decided=true) when the approval holds.
func (in *Input) decision(s *Server) (state, reason string, fix Fix, decided bool) {
	name := s.Name
	review := run(step("get", name), step("approve", name))
	why := s.Config.RepositoryReason
	if s.LocalCode != "" {
		why = s.LocalCode
	}
	if in.StoreErr != nil {
		fix := "repair or move the approval store, then"
		var ue *safefile.UnsafeError
		if errors.As(in.StoreErr, &ue) {
			fix = ue.Fix + ", then"
		}
		return PendingApproval, fmt.Sprintf("%s; the approval store cannot be read: %v", why, in.StoreErr),
			Fix{Text: fix, Steps: []Step{step("approve", name)}}, true
	}
	if what := s.TooLarge(); what != "" {
		// Past the bound the package cannot be pinned whole, and a pin of
		// part of it would leave the rest free to change: no approval can
		// hold, whatever the store says (issue 38, item 6).
		return PendingApproval, fmt.Sprintf("%s; %s, too much to pin, so it cannot be approved", why, what),
			Fix{Text: "give the server a package of its own: a folder with a package.json or pyproject.toml holding its code and nothing else, then approve it"}, true
	}
	var dec approval.Decision
	ok := false
	if in.Store != nil {
		dec, ok = in.Store.Peek(in.Project, name) // read only: dec.Files is the store's
	}
	switch {
	case !ok:
		return PendingApproval, why + "; not approved on this machine", review, true
	case dec.Decision == "rejected":
		return Rejected, "rejected for this project", run(step("reset", name)), true
	case dec.Decision != "approved":
		return PendingApproval, fmt.Sprintf("%s; the recorded decision %q is not one piagent knows", why, dec.Decision), review, true
	case dec.Digest != s.Digest:
		return ApprovalChanged, "approved, but the repository's definition changed since", review, true
	}
	if len(s.Pinned) > 0 && dec.Files == nil {
		return ApprovalChanged, "approved, but pinned files not recorded (decision made by an older piagent)", review, true
	}
	pc := pinCheck{made: true, files: len(dec.Files)}
	for i := range s.Pinned {
		p := &s.Pinned[i]
		var ok bool
		if p.Recorded, ok = dec.Files[p.Path]; ok && (i == 0 || s.Pinned[i-1].Path != p.Path) {
			pc.recorded++
		}
		if p.Changed() {
			pc.changed = append(pc.changed, i)
		}
	}
	s.pins = pc
	return in.pinVerdict(s)
}

// pinVerdict is decision's last step, the pinned files against the
// record (s.pins): a blocking state, or "" when they match.
func (in *Input) pinVerdict(s *Server) (state, reason string, fix Fix, decided bool) {
	review := run(step("get", s.Name), step("approve", s.Name))
	if ch := s.pins.changed; len(ch) > 0 {
		p, more := s.Pinned[ch[0]], ""
		if len(ch) > 1 {
			more = fmt.Sprintf(" (and %d more files)", len(ch)-1)
		}
		switch {
		case p.Digest == "":
			return ApprovalChanged, fmt.Sprintf("approved, but %s is gone%s", p.Path, more), review, true
		case p.Recorded == "":
			return ApprovalChanged, fmt.Sprintf("approved, but %s is new since%s", p.Path, more), review, true
		}
		return ApprovalChanged, fmt.Sprintf("approved, but %s changed since%s", p.Path, more), review, true
	}
	if s.pins.files > s.pins.recorded {
		// a recorded file the definition no longer pins (Pinned is
		// sorted by path, and its paths are distinct)
		dec, _ := in.Store.Peek(in.Project, s.Name)
		for path := range dec.Files {
			if pinnedAt(s.Pinned, path) < 0 {
				return ApprovalChanged, fmt.Sprintf("approved, but the definition no longer runs %s", path), review, true
			}
		}
	}
	return "", "", Fix{}, true
}

// Fragment is the repository-owned part of a server's definition, the part
// its digest pins: the one repository entry as written, or, when several
// repository sources name the server, an array of {source, entry} in
// precedence order. The operational switch `disabled` is left out, so
// enabling and disabling never void consent.
func Fragment(cs *mcpconfig.Server) any {
	type part struct {
		src   string
		entry mcpconfig.Entry
	}
	var one [1]part
	parts := one[:0]
	for _, c := range cs.Contributions {
		if !c.Repository {
			continue
		}
		e := c.Entry
		_, dis := e["disabled"]
		_, en := e["enabled"] // Pi's built-in client's switch (issue 19)
		if dis || en {
			e = maps.Clone(e)
			delete(e, "disabled")
			delete(e, "enabled")
		}
		if len(e) == 0 {
			// an enable/disable override contributes nothing to consent
			continue
		}
		src := c.Kind
		if src == "" {
			src = c.Layer
		}
		parts = append(parts, part{src, e})
	}
	switch len(parts) {
	case 0:
		return map[string]any{}
	case 1:
		return parts[0].entry
	}
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = map[string]any{"source": p.src, "entry": p.entry}
	}
	return out
}

func disabledIn(cs *mcpconfig.Server) string {
	for i := len(cs.Contributions) - 1; i >= 0; i-- {
		c := cs.Contributions[i]
		if _, ok := c.Entry["disabled"]; ok {
			return c.File
		}
	}
	return cs.Source.File
}

func isOAuth(e mcpconfig.Entry) bool {
	if e["auth"] == "oauth" {
		return true
	}
	_, ok := e["oauth"].(map[string]any)
	return ok
}

// interpolated returns the string leaves of the fields that interpolation
// applies to that hold a reference ($ or {), for the needs-env check.
func interpolated(e mcpconfig.Entry) []string {
	var out []string
	add := func(v any) {
		if s, ok := v.(string); ok && secret.MayReference(s) {
			out = append(out, s)
		}
	}
	addList := func(v any) {
		if l, ok := v.([]any); ok {
			for _, x := range l {
				add(x)
			}
		}
	}
	addMap := func(v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		refs := 0
		for _, x := range m {
			if s, ok := x.(string); ok && secret.MayReference(s) {
				refs++
			}
		}
		switch refs {
		case 0:
		case 1:
			for _, x := range m {
				add(x)
			}
		default:
			for _, k := range slices.Sorted(maps.Keys(m)) { // in a stable order
				add(m[k])
			}
		}
	}
	addList(e["args"])
	addMap(e["env"])
	addMap(e["headers"])
	add(e["url"])
	add(e["cwd"])
	add(e["socket"])
	add(e["caFile"])
	add(e["bearerToken"])
	if o, ok := e["oauth"].(map[string]any); ok {
		add(o["clientSecret"])
	}
	if r, ok := e["requestHeadersCommand"].(map[string]any); ok {
		add(r["command"])
		addList(r["args"])
		addMap(r["env"])
	}
	return out
}

func (in *Input) missingEnv(name string, e mcpconfig.Entry) []string {
	var optional []string
	if in.Optional != nil {
		optional = in.Optional(name)
	}
	var vars []string
	if lit, _ := e["literalEnv"].(bool); lit {
		// env stays literal; the other fields still interpolate
		e = maps.Clone(e)
		delete(e, "env")
	}
	for _, s := range interpolated(e) {
		vars = append(vars, secret.References(s)...)
	}
	if v, ok := e["bearerTokenEnv"].(string); ok && v != "" {
		vars = append(vars, v)
	}
	var missing []string
	for _, v := range vars {
		if in.getenv(v) != "" || slices.Contains(optional, v) || slices.Contains(missing, v) {
			continue
		}
		missing = append(missing, v)
	}
	return missing
}

// missingCommand looks the stdio command up the way a shell would find it,
// without running anything: a name with a slash is a path, any other name is
// searched on PATH.
func (in *Input) missingCommand(e mcpconfig.Entry) (string, bool) {
	cmd, ok := e["command"].(string)
	if !ok || cmd == "" {
		return "", false
	}
	if strings.Contains(cmd, "/") {
		p := cmd
		if !filepath.IsAbs(p) {
			p = filepath.Join(in.baseDir(e), p)
		}
		if fi, err := in.FS.Stat(p); err == nil && !fi.IsDir() {
			return "", false
		}
		return cmd, true
	}
	dir := in.baseDir(e)
	key := [2]string{cmd, dir}
	if found, ok := in.onPath[key]; ok {
		return cmd, !found
	}
	found := paths.LookPath(cmd, in.getenv("PATH"), dir, in.FS.Stat) != ""
	if in.onPath == nil {
		in.onPath = map[[2]string]bool{}
	}
	in.onPath[key] = found
	return cmd, !found
}

// baseDir is where a stdio server starts: its cwd, or the session cwd.
func (in *Input) baseDir(e mcpconfig.Entry) string {
	if c, ok := e["cwd"].(string); ok && c != "" {
		// The adapter interpolates cwd from Pi's environment (an unset
		// variable is ""), then expands ~.
		c = in.interpolate(c)
		if c == "" {
			return in.View.Cwd // the adapter refuses an empty cwd
		}
		if c == "~" {
			return in.View.Home
		}
		if strings.HasPrefix(c, "~/") {
			return filepath.Join(in.View.Home, c[2:])
		}
		if filepath.IsAbs(c) {
			return filepath.Clean(c)
		}
		return filepath.Join(in.View.Cwd, c)
	}
	return in.View.Cwd
}

func npxHitReason(hit string) string {
	switch path.Base(hit) {
	case ".npmrc", ".yarnrc", ".yarnrc.yml", "bunfig.toml", ".pnpmfile.cjs":
		return "your own definition, but its package runner reads the project's " + hit + " (settings that can load code into the server)"
	}
	return "your own definition, but npx runs the project's " + hit + " in place of the registry package"
}

// The adapter's three interpolation syntaxes, applied in its order
// (utils.ts interpolateEnvVars): a missing variable becomes "".
var (
	interpBrace  = regexp.MustCompile(`\$\{(\w+)\}`)
	interpPwsh   = regexp.MustCompile(`\$env:(\w+)`)
	interpOpenCd = regexp.MustCompile(`\{env:(\w+)\}`)
)

// interpolate is the adapter's interpolateEnvVars over this gate's
// environment.
func (in *Input) interpolate(s string) string {
	if !strings.Contains(s, "$") && !strings.Contains(s, "{env:") {
		return s
	}
	for _, re := range []*regexp.Regexp{interpBrace, interpPwsh, interpOpenCd} {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			return in.getenv(re.FindStringSubmatch(m)[1])
		})
	}
	return s
}

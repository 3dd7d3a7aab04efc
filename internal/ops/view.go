package ops

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/grant"
	"github.com/piagent/piagent/internal/launch"
	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/policy"
	"github.com/piagent/piagent/internal/safefile"
	"github.com/piagent/piagent/internal/secret"
)

// Contribution is one file's part of a server's definition, as a person
// may read it.
type Contribution struct {
	Layer                string         `json:"layer"`
	Scope                string         `json:"scope"`
	File                 string         `json:"file"`
	Kind                 string         `json:"kind,omitempty"`
	RepositoryControlled bool           `json:"repositoryControlled"`
	RepositoryReason     string         `json:"repositoryReason,omitempty"`
	Entry                map[string]any `json:"entry"`
}

// Flag is one thing a preview draws attention to.
type Flag struct {
	Code string `json:"code"` // "code-loading", "path-in-project", "committed-secret"
	Key  string `json:"key"`
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Text string `json:"text"`
}

// View is a server's definition for a person to read (get, and approve's
// preview).
type View struct {
	Definition    map[string]any    `json:"definition"`
	Contributions []Contribution    `json:"contributions"`
	PinnedFiles   []gate.PinnedFile `json:"pinnedFiles"`
	Owned         any               `json:"repositoryOwned,omitempty"`
	// ApprovalDigest covers the repository-owned fragment and every pinned
	// file: `approve --digest` records consent only while it still holds.
	ApprovalDigest string `json:"approvalDigest,omitempty"`
	// Flags are what a person should look at before approving.
	Flags []Flag `json:"flags"`
	// Sandbox is how piagent pi starts the server: "confined", "remote",
	// "not confined: …" or "off" (the user's serverSandbox); Grants what a
	// person let it reach beyond its profile.
	Sandbox string      `json:"sandbox"`
	Grants  grant.Grant `json:"grants"`
	// Environment names the variables of this machine's environment the
	// server receives beyond the sandbox's default set (PATH, HOME, locale,
	// proxies, …): its definition's own keys, its grant's and the person's
	// passEnv. Names only, never values; empty for a remote server.
	Environment []string `json:"environment"`
	// Tools is what the server offers the model against its catalogue pin.
	Tools Tools `json:"tools"`
}

// View is s's definition for a person to read. Values a repository wrote
// are shown as written (it commits them; the person must see what will
// run), except those that look like a secret, which stay masked and are
// flagged with their file and line. Values from the user's own files stay
// masked. Code-loading variables are always shown.
func (o *Ops) View(g *gate.Gate, s *gate.Server) View {
	out := View{PinnedFiles: s.Pinned, Flags: []Flag{}, Tools: o.Tools(g, s)}
	if out.PinnedFiles == nil {
		out.PinnedFiles = []gate.PinnedFile{}
	}
	// The merge is shallow per key: a key's value comes whole from the last
	// contribution that sets it.
	owner := Owners(s)
	masked, written := secret.Mask(s.Config.Entry), map[string]any{}
	for k, v := range s.Config.Entry {
		if c, ok := owner[k]; ok && c.Repository {
			written[k] = v
		}
	}
	shown, _ := secret.MaskWritten(written)
	for k, v := range shown {
		masked[k] = v
	}
	secret.ShowCodeLoading(masked, s.Config.Entry)
	out.Definition = masked
	for _, c := range s.Config.Contributions {
		e := secret.Mask(c.Entry)
		if c.Repository {
			var secrets []string
			e, secrets = secret.MaskWritten(c.Entry)
			for _, key := range secrets {
				out.Flags = append(out.Flags, Flag{Code: "committed-secret", Key: key, File: c.File, Line: LineOf(c.File, valueAt(c.Entry, key)),
					Text: "the repository commits what looks like a secret; it stays masked here"})
			}
		} else {
			secret.ShowCodeLoading(e, c.Entry)
		}
		out.Contributions = append(out.Contributions, Contribution{Layer: c.Layer, Scope: c.Scope, File: c.File, Kind: c.Kind,
			RepositoryControlled: c.Repository, RepositoryReason: c.Reason, Entry: e})
	}
	out.Flags = append(out.Flags, CodeFlags(s, owner, g.View.Cwd)...)
	out.Sandbox = Confinement(s, g.View.Cwd)
	if out.Sandbox == "confined" && o.Confine(g.View.Cwd) == nil {
		out.Sandbox = "off: serverSandbox is off in your policy; the server runs with everything you have"
	}
	out.Grants, _ = grant.Of(o.Home, g.Project, s.Name)
	out.Environment = []string{}
	if cmd, _ := s.Config.Entry["command"].(string); cmd != "" {
		env, _ := s.Config.Entry["env"].(map[string]any)
		names := slices.Collect(maps.Keys(env))
		names = append(names, out.Grants.Env...)
		if pol, err := policy.LoadSettings(o.Home, g.View.Cwd); err == nil && pol.Err() == nil {
			names = append(names, pol.PassEnv()...)
		}
		slices.Sort(names)
		out.Environment = slices.Compact(names)
	}
	if s.Repository {
		out.Owned = s.Owned()
		out.ApprovalDigest = s.ApprovalDigest()
	}
	return out
}

// Owners is, for each key of s's merged definition, the contribution its
// value comes from (the merge is shallow per key).
func Owners(s *gate.Server) map[string]mcpconfig.Contribution {
	owner := map[string]mcpconfig.Contribution{}
	for _, c := range s.Config.Contributions {
		for k := range c.Entry {
			owner[k] = c
		}
	}
	return owner
}

// CodeFlags flags every code-loading variable of the merged definition, and
// a PATH that names a folder inside the project.
func CodeFlags(s *gate.Server, owner map[string]mcpconfig.Contribution, project string) []Flag {
	env, _ := s.Config.Entry["env"].(map[string]any)
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []Flag
	from := owner["env"]
	for _, k := range keys {
		v, _ := env[k].(string)
		switch {
		case secret.CodeLoading(k):
			out = append(out, Flag{Code: "code-loading", Key: "env." + k, File: from.File,
				Text: fmt.Sprintf("%s makes the server load code: %s; the files it names are pinned with the approval", k, v)})
		case k == "PATH":
			for _, d := range filepath.SplitList(v) {
				if d != "" && !strings.HasPrefix(d, "$") && paths.Within(project, paths.Abs(project, d)) {
					out = append(out, Flag{Code: "path-in-project", Key: "env.PATH", File: from.File,
						Text: fmt.Sprintf("PATH puts %s, a folder inside the project, before the system's: its files are pinned with the approval", d)})
					break
				}
			}
		}
	}
	return out
}

// Confinement says how a server runs under piagent pi: "confined",
// "not confined: …" (a container runtime, whose socket is root-equivalent),
// or "remote".
func Confinement(s *gate.Server, project string) string {
	if s.Config == nil {
		return ""
	}
	cmd, _ := s.Config.Entry["command"].(string)
	switch {
	case cmd == "":
		return "remote"
	case launch.ContainerRuntime(cmd, project):
		return "not confined: " + filepath.Base(cmd) + " talks to its daemon's socket, which is root-equivalent; piagent cannot confine what the container does (it gets the server's environment allow-list alone: none of Pi's keys)"
	}
	return "confined"
}

// valueAt is the string at a MaskWritten key path ("env.X", "args[2]").
func valueAt(e map[string]any, key string) string {
	var cur any = e
	for _, part := range strings.Split(key, ".") {
		name, idx, hasIdx := strings.Cut(part, "[")
		if m, ok := cur.(map[string]any); ok {
			cur = m[name]
		}
		if hasIdx {
			var i int
			fmt.Sscanf(strings.TrimSuffix(idx, "]"), "%d", &i)
			if l, ok := cur.([]any); ok && i < len(l) {
				cur = l[i]
			}
		}
	}
	s, _ := cur.(string)
	return s
}

// LineOf finds the first line of file holding value as a JSON string; 0
// when it cannot tell.
func LineOf(file, value string) int {
	if value == "" {
		return 0
	}
	data, err := safefile.Read(file, safefile.Options{})
	if err != nil {
		return 0
	}
	enc, _ := json.Marshal(value)
	i := strings.Index(string(data), string(enc))
	if i < 0 {
		i = strings.Index(string(data), value)
	}
	if i < 0 {
		return 0
	}
	return strings.Count(string(data[:i]), "\n") + 1
}

// Renderable fails when the view of s cannot be shown: a value JSON
// cannot write (a NaN or an infinity held as a float, as a codex TOML nan
// or inf is). What cannot be shown cannot be consented to (issue 39, item
// 5): get exits non-zero and approve refuses, naming the file and line.
// Numbers beyond float64 in a JSON file are kept as written, and shown.
func (o *Ops) Renderable(g *gate.Gate, s *gate.Server, v View) error {
	_, err1 := json.Marshal(v.Definition)
	_, err2 := json.Marshal(v.Owned)
	if err1 == nil && err2 == nil {
		return nil
	}
	key, _ := unrenderable(v.Definition, "")
	if key == "" {
		key, _ = unrenderable(v.Owned, "")
	}
	file := s.Config.Source.File
	where := Display(o.Home, g.View.Cwd, file)
	last := key[strings.LastIndexAny(key, ".]")+1:]
	if n := LineOf(file, last); n > 0 {
		where += fmt.Sprintf(":%d", n)
	}
	return refused(fmt.Errorf("the definition of %s cannot be shown: %s in %s is a number JSON cannot write (%v), so it cannot be previewed or approved", s.Name, cmp.Or(key, "a value"), where, cmp.Or(err1, err2)),
		gate.Fix{Text: "write the value as a finite number (or remove it) in " + where + ", then run", Steps: []gate.Step{{Sub: "get", Args: s.Name}}, Note: "again", Quoted: true})
}

// unrenderable finds the first value in v JSON cannot write, with its path.
func unrenderable(v any, path string) (string, bool) {
	switch x := v.(type) {
	case float64:
		return path, math.IsNaN(x) || math.IsInf(x, 0)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if at, bad := unrenderable(x[k], p); bad {
				return at, true
			}
		}
	case []any:
		for i, e := range x {
			if at, bad := unrenderable(e, fmt.Sprintf("%s[%d]", path, i)); bad {
				return at, true
			}
		}
	}
	return "", false
}

// PinnedTree is a folder pinned whole with a definition (any change there
// asks again), and how many of its files the pin holds.
type PinnedTree struct {
	Tree  string // project-relative, slash-separated; "." the project
	Files int
}

// PinnedTrees are the folders pinned whole among pinned, in their order.
func PinnedTrees(pinned []gate.PinnedFile) []PinnedTree {
	var out []PinnedTree
	for _, p := range pinned {
		if p.Tree == "" {
			continue
		}
		n := 0
		for _, q := range pinned {
			if p.Tree == "." || paths.Within(p.Tree, q.Path) {
				n++
			}
		}
		out = append(out, PinnedTree{Tree: p.Tree, Files: n})
	}
	return out
}

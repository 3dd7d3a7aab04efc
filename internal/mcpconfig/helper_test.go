package mcpconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// fixture lays out a txtar archive under a fresh directory and returns it.
// "$ROOT" in file contents becomes that directory. A file whose name ends in
// "@symlink" becomes a symlink named without the suffix, pointing at the
// file's trimmed content (after $ROOT substitution).
func fixture(t testing.TB, archive string) string {
	t.Helper()
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	for _, f := range txtar.Parse([]byte(archive)).Files {
		data := strings.ReplaceAll(string(f.Data), "$ROOT", root)
		name := filepath.Join(root, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutSuffix(name, "@symlink"); ok {
			if err := os.Symlink(strings.TrimSpace(data), target); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if strings.HasSuffix(f.Name, ".dir") {
			if err := os.MkdirAll(strings.TrimSuffix(name, ".dir"), 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// env turns pairs into a Getenv.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// loadAt loads with home at <root>/home and cwd at <root>/<cwd>.
func loadAt(t testing.TB, root, cwd string, getenv func(string) string) *View {
	t.Helper()
	opts := Options{Home: filepath.Join(root, "home"), Cwd: filepath.Join(root, filepath.FromSlash(cwd)), Getenv: getenv}
	if err := os.MkdirAll(opts.Home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(opts.Cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	v, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// names lists server names, marking union-only ones with a "~" suffix.
func names(v *View) []string {
	var out []string
	for _, s := range v.Servers {
		n := s.Name
		if !s.AdapterLoads {
			n += "~"
		}
		out = append(out, n)
	}
	return out
}

func layerIDs(v *View) []string {
	var out []string
	for _, l := range v.Layers {
		out = append(out, l.ID)
	}
	return out
}

func mustServer(t testing.TB, v *View, name string) *Server {
	t.Helper()
	s, ok := v.Server(name)
	if !ok {
		t.Fatalf("no server %q; have %v", name, names(v))
	}
	return s
}

// rel strips root from p for stable comparisons.
func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// contribSummary lists each contribution as layer:kind:file (file relative).
func contribSummary(root string, s *Server) []string {
	var out []string
	for _, c := range s.Contributions {
		out = append(out, c.Layer+":"+c.Kind+":"+rel(root, c.File))
	}
	return out
}

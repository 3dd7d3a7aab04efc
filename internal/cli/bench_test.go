package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/gate"
)

// largeFixture spreads n servers across every file layer and three import
// kinds (cursor, vscode, codex TOML).
func largeFixture(b testing.TB, n int) (home, proj string) {
	home, proj = b.TempDir(), b.TempDir()
	files := []string{
		filepath.Join(home, ".config", "mcp", "mcp.json"),
		filepath.Join(home, ".agents", "mcp.json"),
		filepath.Join(home, ".agents", "mcp", "mcp.json"),
		filepath.Join(home, ".pi", "agent", "mcp.json"),
		filepath.Join(proj, ".mcp.json"),
		filepath.Join(proj, ".pi", "mcp.json"),
		filepath.Join(home, ".cursor", "mcp.json"),
		filepath.Join(proj, ".vscode", "mcp.json"),
	}
	bodies := make([]strings.Builder, len(files))
	var toml strings.Builder
	for i := 0; i < n; i++ {
		slot := i % (len(files) + 1)
		if slot == len(files) {
			fmt.Fprintf(&toml, "[mcp_servers.codex-%d]\ncommand = \"node\"\nargs = [\"s%d.js\"]\n", i, i)
			continue
		}
		w := &bodies[slot]
		if w.Len() > 0 {
			w.WriteString(",\n")
		}
		fmt.Fprintf(w, `"srv-%d": {"command": "node", "args": ["server-%d.js", "--port", "%d"], "env": {"TOKEN": "${TOKEN_%d}", "MODE": "fast"}}`, i, i, i, i)
	}
	for i, f := range files {
		os.MkdirAll(filepath.Dir(f), 0o755)
		body := "{\n  // generated\n  \"mcpServers\": {\n" + bodies[i].String() + "\n  }"
		if f == filepath.Join(proj, ".mcp.json") {
			body += `, "imports": ["cursor", "vscode", "codex"]`
		}
		os.WriteFile(f, []byte(body+"\n}\n"), 0o644)
	}
	os.MkdirAll(filepath.Join(home, ".codex"), 0o755)
	os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(toml.String()), 0o644)
	return home, proj
}

// BenchmarkListJSON1000 is `piagent-mcp list --json` in-process over 1,000
// servers spread across all layers and imports.
func BenchmarkListJSON1000(b *testing.B) {
	home, proj := largeFixture(b, 1000)
	env := Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Dir: proj, Home: home,
		Environ: []string{"HOME=" + home, "PATH=/usr/bin:/bin"}, Now: time.Now}
	if code := Main("piagent-mcp", []string{"list", "--json"}, env); code != 0 {
		b.Fatalf("exit %d", code)
	}
	b.ReportAllocs()
	for b.Loop() {
		Main("piagent-mcp", []string{"list", "--json"}, env)
	}
}

// BenchmarkListJSON10000 is the same over 10,000 servers.
func BenchmarkListJSON10000(b *testing.B) {
	home, proj := largeFixture(b, 10000)
	env := Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Dir: proj, Home: home,
		Environ: []string{"HOME=" + home, "PATH=/usr/bin:/bin"}, Now: time.Now}
	b.ReportAllocs()
	for b.Loop() {
		if code := Main("piagent-mcp", []string{"list", "--json"}, env); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

// TestWriteListSameBytes: list --json written a server at a time is the
// document writeJSON writes, byte for byte.
func TestWriteListSameBytes(t *testing.T) {
	home, proj := largeFixture(t, 60)
	var streamed, whole bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &streamed, Stderr: io.Discard, Dir: proj, Home: home,
		Environ: []string{"HOME=" + home, "PATH=/usr/bin:/bin"}, Now: time.Now}
	if code := Main("piagent-mcp", []string{"list", "--json"}, env); code != 0 {
		t.Fatalf("exit %d", code)
	}
	a := &app{env: env, name: "piagent-mcp"}
	a.env.Stdout = &whole
	g, err := gate.Load(gate.Options{Home: home, Cwd: proj, Getenv: env.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.writeJSON(a.op().List(g, a.mcpCmd(), false)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(streamed.Bytes(), whole.Bytes()) || !strings.Contains(streamed.String(), `"srv-59"`) {
		t.Fatalf("streamed:\n%s\nwhole:\n%s", streamed.String()[:min(400, streamed.Len())], whole.String()[:min(400, whole.Len())])
	}
}

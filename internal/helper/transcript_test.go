package helper

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/piagent/piagent/internal/engine"
	"github.com/piagent/piagent/internal/sandbox"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the transcripts' answers with the helper's")

// TestTranscripts replays testdata/transcripts/*.txtar, the helper protocol's
// contract, against the real helper. Each archive holds a home ("home/…") and
// a project ("project/…"), environment lines in its comment ("env K=V"), and
// the file "exchange": request lines ("> {…}") each followed by the answer
// ("< {…}", without the id). $HOME and $PROJECT stand for the two folders.
// The extension's tests replay the same files against the stub helper, so
// the TypeScript side sends exactly these requests and reads these answers.
//
// go test ./internal/helper -run Transcripts -update rewrites the answers.
func TestTranscripts(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txtar"))
	if len(files) < 5 {
		t.Fatalf("%d transcripts", len(files))
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			if r, err := filepath.EvalSymlinks(root); err == nil {
				root = r
			}
			home, project := filepath.Join(root, "home"), filepath.Join(root, "project")
			for _, d := range []string{home, project} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{}
			for _, line := range strings.Split(string(ar.Comment), "\n") {
				if kv, ok := strings.CutPrefix(line, "env "); ok {
					k, v, _ := strings.Cut(kv, "=")
					env[k] = v
				}
			}
			var exchange *txtar.File
			for i, f := range ar.Files {
				if f.Name == "exchange" {
					exchange = &ar.Files[i]
					continue
				}
				p := filepath.Join(root, filepath.FromSlash(f.Name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if exchange == nil {
				t.Fatal("no exchange")
			}
			quote := func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }
			expand := strings.NewReplacer("$HOME", quote(home), "$PROJECT", quote(project))
			collapse := strings.NewReplacer(quote(project), "$PROJECT", quote(home), "$HOME")

			// The machine's sandbox is fixed, so the answers do not depend
			// on the kernel the test runs on.
			landlock := func() sandbox.Status { return sandbox.Status{Mechanism: "landlock", ABI: 7, MountNamespace: true} }
			c := startServer(t, &Server{Engine: &engine.Engine{Home: home, Cwd: project, Sandbox: landlock,
				Getenv: func(k string) string { return env[k] }}, Build: "test"})
			lines := strings.Split(strings.TrimRight(string(exchange.Data), "\n"), "\n")
			var out []string
			asked := 0
			for i := 0; i < len(lines); i++ {
				req, ok := strings.CutPrefix(lines[i], "> ")
				if !ok {
					out = append(out, lines[i]) // comments and blank lines
					continue
				}
				if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "< ") {
					t.Fatalf("line %d: a request without an answer", i+1)
				}
				want := strings.TrimPrefix(lines[i+1], "< ")
				i++
				var m map[string]any
				if err := json.Unmarshal([]byte(expand.Replace(req)), &m); err != nil {
					t.Fatalf("request %q: %v", req, err)
				}
				asked++
				m["id"] = asked
				line, _ := json.Marshal(m)
				got := c.raw(string(line))
				if got["id"] != float64(asked) {
					t.Fatalf("%s: answer id %v", req, got["id"])
				}
				delete(got, "id")
				gotJSON := marshalCompact(t, got)
				if *update {
					out = append(out, "> "+req, "< "+collapse.Replace(gotJSON))
					continue
				}
				var wantV, gotV any
				if err := json.Unmarshal([]byte(expand.Replace(want)), &wantV); err != nil {
					t.Fatalf("answer %q: %v", want, err)
				}
				_ = json.Unmarshal([]byte(gotJSON), &gotV)
				if diff := cmp.Diff(wantV, gotV); diff != "" {
					t.Errorf("%s (-transcript +helper):\n%s", req, diff)
				}
			}
			if asked == 0 {
				t.Fatal("the exchange asks nothing")
			}
			if *update {
				exchange.Data = []byte(strings.Join(out, "\n") + "\n")
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func marshalCompact(t *testing.T, v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(b.String())
}

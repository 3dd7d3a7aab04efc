package gate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/piagent/piagent/internal/approval"
	"github.com/piagent/piagent/internal/mcpconfig"
)

// TestFragmentDigestVectors: a server declared in one repository file hashes
// exactly as the TypeScript piagent recorded it, so its decisions carry over.
func TestFragmentDigestVectors(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "digest-vectors.json"))
	if err != nil {
		t.Fatalf("the digest vectors (a copy of the TypeScript piagent's, in testdata): %v", err)
	}
	var vectors []struct {
		Entry  map[string]any `json:"entry"`
		Digest string         `json:"digest"`
	}
	if err := json.Unmarshal(data, &vectors); err != nil {
		t.Fatal(err)
	}
	matched := 0
	for i, v := range vectors {
		cs := &mcpconfig.Server{Name: "s", Entry: v.Entry, RepositoryControlled: true,
			Contributions: []mcpconfig.Contribution{{Layer: mcpconfig.LayerSharedProject, Entry: v.Entry, Repository: true}}}
		g := Compute(Input{View: &mcpconfig.View{Cwd: t.TempDir(), Servers: []mcpconfig.Server{*cs}}, FS: OSFS})
		got := g.Servers[0].Digest
		lone := strings.Contains(string(data), `\ud83d`) && fmt.Sprint(v.Entry["args"]) != "" && strings.Contains(fmt.Sprint(v.Entry["args"]), "\uFFFD")
		switch {
		case lone:
			// A lone surrogate cannot live in a Go string; decoding turns it
			// into U+FFFD, so the digest differs and such a decision must be
			// made once more.
			if got == v.Digest {
				t.Errorf("vector %d (lone surrogate): digest unexpectedly matches", i)
			}
		case got != v.Digest:
			t.Errorf("vector %d: digest %s, want %s", i, got, v.Digest)
		default:
			matched++
		}
	}
	if matched != len(vectors)-1 {
		t.Errorf("matched %d of %d vectors, want all but the lone-surrogate one", matched, len(vectors))
	}
}

// TestFragmentDisabledIgnored: enabling and disabling never void consent.
func TestFragmentDisabledIgnored(t *testing.T) {
	mk := func(e map[string]any) string {
		cs := &mcpconfig.Server{Name: "s", Entry: e, RepositoryControlled: true,
			Contributions: []mcpconfig.Contribution{{Layer: mcpconfig.LayerSharedProject, Entry: e, Repository: true}}}
		g := Compute(Input{View: &mcpconfig.View{Cwd: t.TempDir(), Servers: []mcpconfig.Server{*cs}}, FS: OSFS})
		return g.Servers[0].Digest
	}
	a := mk(map[string]any{"command": "x"})
	if b := mk(map[string]any{"command": "x", "disabled": true}); a != b {
		t.Errorf("disabled changed the digest: %s vs %s", a, b)
	}
	if c := mk(map[string]any{"command": "x", "lifecycle": "eager"}); a == c {
		t.Errorf("lifecycle did not change the digest")
	}
}

// TestFragmentSeveralSources: several repository sources give an array of
// {source, entry} in precedence order; the user's own parts are left out.
func TestFragmentSeveralSources(t *testing.T) {
	cs := &mcpconfig.Server{Name: "s", Contributions: []mcpconfig.Contribution{
		{Layer: mcpconfig.LayerSharedGlobal, Entry: map[string]any{"command": "mine"}},
		{Layer: mcpconfig.LayerSharedProject, Kind: "vscode", Entry: map[string]any{"args": []any{"a"}}, Repository: true},
		{Layer: mcpconfig.LayerPiProject, Entry: map[string]any{"env": map[string]any{"A": "1"}, "disabled": true}, Repository: true},
	}}
	got, _ := json.Marshal(Fragment(cs))
	want := `[{"entry":{"args":["a"]},"source":"vscode"},{"entry":{"env":{"A":"1"}},"source":"pi-project"}]`
	if string(got) != want {
		t.Errorf("fragment\n got %s\nwant %s", got, want)
	}
}

// TestStatesPrecedence walks the seed's state order.
func TestStatesPrecedence(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.MkdirAll(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "present"), []byte("#!/bin/sh\n"), 0o755)
	repo := func(e map[string]any) mcpconfig.Server {
		return mcpconfig.Server{Name: "s", Entry: e, AdapterLoads: true, RepositoryControlled: true,
			Contributions: []mcpconfig.Contribution{{Layer: mcpconfig.LayerSharedProject, Entry: e, Repository: true}}}
	}
	user := func(e map[string]any) mcpconfig.Server {
		return mcpconfig.Server{Name: "s", Entry: e, AdapterLoads: true,
			Contributions: []mcpconfig.Contribution{{Layer: mcpconfig.LayerSharedGlobal, Entry: e}}}
	}
	env := func(k string) string {
		if k == "PATH" {
			return bin
		}
		if k == "SET" {
			return "1"
		}
		return ""
	}
	approvedFor := func(cs mcpconfig.Server, decision string) *approval.Data {
		g := Compute(Input{View: &mcpconfig.View{Cwd: dir, Servers: []mcpconfig.Server{cs}}, FS: OSFS, Project: dir})
		d := &approval.Data{}
		d.Set(dir, "s", approval.Decision{Decision: decision, Digest: g.Servers[0].Digest, Files: map[string]string{}})
		return d
	}
	cases := []struct {
		name  string
		srv   mcpconfig.Server
		store func(mcpconfig.Server) *approval.Data
		want  string
	}{
		{"disabled beats everything", repo(map[string]any{"command": "missing", "disabled": true}), nil, Disabled},
		{"rejected", repo(map[string]any{"command": "present"}), func(cs mcpconfig.Server) *approval.Data { return approvedFor(cs, "rejected") }, Rejected},
		{"pending", repo(map[string]any{"command": "missing"}), nil, PendingApproval},
		// a repository could stop the gate with this before
		{"blank BASH_ENV is pending", repo(map[string]any{"command": "present", "env": map[string]any{"BASH_ENV": " "}}), nil, PendingApproval},
		{"approved then needs-command", repo(map[string]any{"command": "missing"}), func(cs mcpconfig.Server) *approval.Data { return approvedFor(cs, "approved") }, NeedsCommand},
		{"user needs-env", user(map[string]any{"command": "present", "env": map[string]any{"T": "${UNSET}"}}), nil, NeedsEnv},
		{"user env set", user(map[string]any{"command": "present", "env": map[string]any{"T": "${SET}"}}), nil, Ready},
		{"needs-command before needs-env", user(map[string]any{"command": "missing", "env": map[string]any{"T": "${UNSET}"}}), nil, NeedsCommand},
		{"oauth", user(map[string]any{"url": "https://x.example", "auth": "oauth"}), nil, OAuth},
		{"$env and {env} forms", user(map[string]any{"url": "https://x.example", "headers": map[string]any{"A": "$env:UNSET2", "B": "{env:UNSET3}"}}), nil, NeedsEnv},
		{"bearerTokenEnv", user(map[string]any{"url": "https://x.example", "bearerTokenEnv": "UNSET4"}), nil, NeedsEnv},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var store *approval.Data
			if tc.store != nil {
				store = tc.store(tc.srv)
			}
			g := Compute(Input{View: &mcpconfig.View{Cwd: dir, Servers: []mcpconfig.Server{tc.srv}}, Store: store, Project: dir, Getenv: env, FS: OSFS})
			if got := g.Servers[0].State; got != tc.want {
				t.Errorf("state %s (%s), want %s", got, g.Servers[0].Reason, tc.want)
			}
		})
	}
}

// TestOptionalVarNotMissing: a preset's optional variable is not reported.
func TestOptionalVarNotMissing(t *testing.T) {
	e := map[string]any{"url": "https://x.example", "headers": map[string]any{"K": "${CONTEXT7_API_KEY}"}}
	cs := mcpconfig.Server{Name: "context7", Entry: e, AdapterLoads: true}
	g := Compute(Input{View: &mcpconfig.View{Cwd: t.TempDir(), Servers: []mcpconfig.Server{cs}}, FS: OSFS,
		Optional: func(name string) []string {
			if name == "context7" {
				return []string{"CONTEXT7_API_KEY"}
			}
			return nil
		}})
	if s := g.Servers[0].State; s != Ready {
		t.Errorf("state %s, want ready", s)
	}
}

// TestFragmentEnableOverride: a {"disabled": false} override the person's
// enable wrote into .pi/mcp.json does not change what was approved.
func TestFragmentEnableOverride(t *testing.T) {
	base := map[string]any{"command": "x"}
	one := &mcpconfig.Server{Contributions: []mcpconfig.Contribution{{Layer: mcpconfig.LayerSharedProject, Entry: base, Repository: true}}}
	two := &mcpconfig.Server{Contributions: []mcpconfig.Contribution{
		{Layer: mcpconfig.LayerSharedProject, Entry: base, Repository: true},
		{Layer: mcpconfig.LayerPiProject, Entry: map[string]any{"disabled": false}, Repository: true},
	}}
	a, _ := json.Marshal(Fragment(one))
	b, _ := json.Marshal(Fragment(two))
	if string(a) != string(b) {
		t.Errorf("enable override changed the fragment: %s vs %s", a, b)
	}
}

// TestWarnings: doctor's warnings for targets a definition cannot pin and
// for settings a repository layer sets to weaken the adapter's protections;
// the user's own settings and pinned targets earn none.
func TestWarnings(t *testing.T) {
	repo := func(name string, e map[string]any) mcpconfig.Server {
		return mcpconfig.Server{Name: name, Entry: e, AdapterLoads: true, RepositoryControlled: true,
			Contributions: []mcpconfig.Contribution{{Layer: mcpconfig.LayerSharedProject, Entry: e, Repository: true}}}
	}
	v := &mcpconfig.View{Cwd: t.TempDir(), Servers: []mcpconfig.Server{
		repo("npx-loose", map[string]any{"command": "npx", "args": []any{"-y", "@acme/pkg"}}),
		repo("npx-latest", map[string]any{"command": "npx", "args": []any{"-y", "pkg@latest"}}),
		repo("npx-exact", map[string]any{"command": "npx", "args": []any{"-y", "@acme/pkg@1.2.3"}}),
		repo("docker-tag", map[string]any{"command": "docker", "args": []any{"run", "-i", "--rm", "-e", "X", "img:1"}}),
		repo("docker-digest", map[string]any{"command": "docker", "args": []any{"run", "-i", "img@sha256:abc"}}),
		repo("uvx-loose", map[string]any{"command": "uvx", "args": []any{"mcp-server-x"}}),
	}, SettingOrigins: map[string][]mcpconfig.SettingOrigin{
		"approveTools": {{File: "/p/.mcp.json", Repository: true, Value: false}},
		"outputGuard":  {{File: "/h/.config/mcp/mcp.json", Repository: false, Value: false}},
		"autoAuth":     {{File: "/p/.mcp.json", Repository: true, Value: false}},
	}}
	g := Compute(Input{View: v, FS: OSFS})
	got := map[string]bool{}
	for _, w := range g.Warnings {
		got[w.Code+":"+w.Server+w.File] = true
	}
	want := []string{"unpinned-target:npx-loose", "unpinned-target:npx-latest", "unpinned-target:docker-tag",
		"unpinned-target:uvx-loose", "repository-setting:/p/.mcp.json"}
	for _, k := range want {
		if !got[k] {
			t.Errorf("missing warning %s; got %v", k, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("warnings %v, want exactly %v (pinned targets, the user's own settings and autoAuth:false earn none)", got, want)
	}
}

// TestActions: what the menu offers for each state.
func TestActions(t *testing.T) {
	for _, tc := range []struct {
		state string
		repo  bool
		want  string
	}{
		{PendingApproval, true, "get approve reject disable"},
		{ApprovalChanged, true, "get approve reject reset disable"},
		{Rejected, true, "get approve reset disable"},
		{Ready, true, "get reject reset disable"},
		{NeedsEnv, true, "get reject reset disable"},
		{Disabled, true, "get reject enable"},
		{Ready, false, "get disable"},
		{Disabled, false, "get enable"},
	} {
		s := &Server{State: tc.state, Repository: tc.repo}
		if got := strings.Join(s.Actions(), " "); got != tc.want {
			t.Errorf("%s repo=%v: %q, want %q", tc.state, tc.repo, got, tc.want)
		}
	}
}

// TestFixWording: a fix is data; the edges word it for the command the
// person types, and JSON carries the data (the helper protocol's steps).
func TestFixWording(t *testing.T) {
	review := run(step("get", "x"), step("approve", "x"))
	if got := review.Render("piagent mcp"); got != "piagent mcp get x, then piagent mcp approve x" {
		t.Errorf("Render: %q", got)
	}
	if got := review.String(); got != "piagent-mcp get x, then piagent-mcp approve x" {
		t.Errorf("String: %q", got)
	}
	b, err := json.Marshal(Server{Name: "x", Fix: review})
	if err != nil || !strings.Contains(string(b), `"fix":{"steps":[{"sub":"get","args":"x"},{"sub":"approve","args":"x"}]}`) {
		t.Errorf("JSON: %s %v", b, err)
	}
	full := Fix{Text: "do <this> \"first\"", Steps: []Step{{Sub: "doctor"}}, Note: "(note)", Quoted: true}
	if b := full.AppendJSON(nil); string(b) != `{"text":"do <this> \"first\"","steps":[{"sub":"doctor"}],"note":"(note)"}` {
		t.Errorf("JSON of every part: %s", b)
	}
	for _, f := range []Fix{full, review, {Text: "t"}, {Note: "n"}, {Text: "t", Note: "n"}, {}} {
		var std bytes.Buffer
		enc := json.NewEncoder(&std)
		enc.SetEscapeHTML(false)
		enc.Encode(struct {
			Text  string `json:"text,omitempty"`
			Steps []Step `json:"steps,omitempty"`
			Note  string `json:"note,omitempty"`
		}{f.Text, f.Steps, f.Note})
		if got := string(f.AppendJSON(nil)); got != strings.TrimSpace(std.String()) {
			t.Errorf("AppendJSON %s, encoding/json %s", got, std.String())
		}
	}
	if b, _ := json.Marshal(Server{Name: "x"}); strings.Contains(string(b), `"fix"`) {
		t.Errorf("an empty fix is left out: %s", b)
	}
	block := Fix{Text: "or switch it off with", Steps: []Step{step("disable", "a", "b")}, Quoted: true, Note: "(note)"}
	if got := block.Render("piagent-mcp"); got != "or switch it off with 'piagent-mcp disable a b' (note)" {
		t.Errorf("quoted: %q", got)
	}
	if got := (Fix{Text: "export X=…"}).Render("piagent mcp"); got != "export X=…" {
		t.Errorf("text only: %q", got)
	}
}

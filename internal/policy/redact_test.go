package policy

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	p := mustMerge(t, "", "")
	tests := []struct {
		name    string
		call    Call
		content string
		want    string
		removed int
	}{
		{
			name: "grep lines from .env and a key",
			call: call("grep", "pattern", "KEY", "path", "."),
			content: strings.Join([]string{
				"src/config.ts:12: const key = process.env.API_KEY",
				".env:1: API_KEY=abc",
				".env:2: OTHER_KEY=def",
				"config/.env.local-3- # context line",
				"src/util.ts:4: // KEY handling",
				".env.example:1: API_KEY=",
				"certs/server.pem:1: -----KEY-----",
				"",
				"[100 matches limit reached. Use limit=200 for more, or refine pattern]",
			}, "\n"),
			want: strings.Join([]string{
				"src/config.ts:12: const key = process.env.API_KEY",
				"[piagent: 3 lines from protected files removed]",
				"src/util.ts:4: // KEY handling",
				".env.example:1: API_KEY=",
				"[piagent: 1 line from protected files removed]",
				"",
				"[100 matches limit reached. Use limit=200 for more, or refine pattern]",
			}, "\n"),
			removed: 4,
		},
		{
			name:    "grep on a single file prints base names",
			call:    call("grep", "pattern", "x", "path", "config/.env"),
			content: ".env:3: x=1",
			want:    "[piagent: 1 line from protected files removed]",
			removed: 1,
		},
		{
			name:    "grep path with a colon near miss",
			call:    call("grep", "pattern", "env", "path", "."),
			content: "docs/env:setup.md:3: read .env first",
			want:    "docs/env:setup.md:3: read .env first",
		},
		{
			name:    "grep under home",
			call:    call("grep", "pattern", "Host", "path", "~"),
			content: ".ssh/config:1: Host github.com\nnotes.txt:2: Host names",
			want:    "[piagent: 1 line from protected files removed]\nnotes.txt:2: Host names",
			removed: 1,
		},
		{
			// rg does not follow a symlink it meets while walking, so a line
			// printed under the link's name is the link's own (empty) content.
			name:    "grep does not follow symlinks while walking",
			call:    call("grep", "pattern", "x", "path", "."),
			content: "innocent.txt:1: x\nok.txt:1: x",
			want:    "innocent.txt:1: x\nok.txt:1: x",
		},
		{
			name:    "find paths",
			call:    call("find", "pattern", "*", "path", "."),
			content: "src/main.go\n.env\n.git/\n.git/config\nsub/.ENV.production\nREADME.md\n.env.sample",
			want:    "src/main.go\n[piagent: 4 paths from protected files removed]\nREADME.md\n.env.sample",
			removed: 4,
		},
		{
			name:    "ls entries",
			call:    call("ls", "path", "~"),
			content: ".bashrc\n.ssh/\n.aws/\nproj/\n.netrc",
			want:    ".bashrc\n[piagent: 1 path from protected files removed]\n.aws/\nproj/\n[piagent: 1 path from protected files removed]",
			removed: 2,
		},
		{
			name:    "ls nothing protected",
			call:    call("ls", "path", "src"),
			content: "main.go\nenvironment.ts\nkeyboard.ts",
			want:    "main.go\nenvironment.ts\nkeyboard.ts",
		},
		{
			name:    "bash grep -r output",
			call:    call("bash", "command", "grep -rn TOKEN ."),
			content: "./src/a.go:3:TOKEN := os.Getenv(\"TOKEN\")\n./.env:1:TOKEN=x\n./deploy/id_rsa:1:not really",
			want:    "./src/a.go:3:TOKEN := os.Getenv(\"TOKEN\")\n[piagent: 2 lines from protected files removed]",
			removed: 2,
		},
		{
			name:    "bash ls -la output",
			call:    call("bash", "command", "ls -la"),
			content: "drwxr-xr-x  5 u u 4096 Jan  1 00:00 .\n-rw-------  1 u u   42 Jan  1 00:00 .env\n-rw-r--r--  1 u u  120 Jan  1 00:00 go.mod",
			want:    "drwxr-xr-x  5 u u 4096 Jan  1 00:00 .\n[piagent: 1 line from protected files removed]\n-rw-r--r--  1 u u  120 Jan  1 00:00 go.mod",
			removed: 1,
		},
		{
			name:    "bash ordinary output",
			call:    call("bash", "command", "go test ./..."),
			content: "ok  \tgithub.com/x/y\t0.01s\nPASS",
			want:    "ok  \tgithub.com/x/y\t0.01s\nPASS",
		},
		{
			name:    "other tools keep lines",
			call:    call("read", "path", "notes.md"),
			content: "see .env for settings",
			want:    "see .env for settings",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, rep := p.Redact(tc.call, tc.content, testFacts())
			if diff := cmp.Diff(tc.want, out); diff != "" {
				t.Errorf("Redact (-want +got):\n%s", diff)
			}
			if rep.Removed != tc.removed {
				t.Errorf("Removed = %d, want %d", rep.Removed, tc.removed)
			}
		})
	}
}

func TestRedactSecrets(t *testing.T) {
	t.Parallel()
	p := mustMerge(t, "", "")
	token := "ghp_" + strings.Repeat("A1b2C3d4E5", 4)[:36]
	in := "src/ci.yml:3: GITHUB_TOKEN=" + token + "\nsrc/a.go:1: fine"
	out, rep := p.Redact(call("grep", "pattern", "TOKEN"), in, testFacts())
	if strings.Contains(out, token) {
		t.Fatalf("secret kept: %q", out)
	}
	if len(rep.Secrets) == 0 || !rep.Changed() {
		t.Errorf("report %+v", rep)
	}
	if !strings.Contains(out, "src/a.go:1: fine") {
		t.Errorf("ordinary line lost: %q", out)
	}
	// MCP output: secrets only.
	out, _ = p.Redact(call("mcp", "tool", "x"), "Authorization: Bearer "+token, testFacts())
	if strings.Contains(out, token) {
		t.Errorf("secret kept in MCP output: %q", out)
	}
}

func TestDecideNeverEchoesSecrets(t *testing.T) {
	t.Parallel()
	p := mustMerge(t, "", "")
	token := "ghp_" + strings.Repeat("Z9y8X7w6V5", 4)[:36]
	d := p.Decide(call("custom", "target", token+"/.env"), testFacts())
	if d.Action != ActionBlock {
		t.Fatalf("%+v", d)
	}
	if strings.Contains(d.Reason, token) || strings.Contains(d.Subject, token) {
		t.Errorf("decision echoes the secret: %+v", d)
	}
}

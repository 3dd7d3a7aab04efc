package imports

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOpencode(t *testing.T) {
	t.Parallel()
	const g = "h/.config/opencode/opencode.json"
	globalMissing := "@/h/.config/opencode/opencode.json missing adapter=true proj=false"
	runCases(t, []readCase{
		{name: "neither, no git", kind: "opencode", want: view{Candidates: []string{
			globalMissing,
			"@/p/opencode.json missing adapter=true proj=true",
		}}},
		{name: "global only", kind: "opencode",
			files: map[string]string{g: `{"mcp": {"a": {"type": "local", "command": ["npx", "-y", "a"], "environment": {"K": "v", "N": 1}, "cwd": "/tmp", "timeout": 5}}}`},
			want: view{
				Servers: []string{`a @/h/.config/opencode/opencode.json adapter=true proj=false {"args":["-y","a"],"command":"npx","cwd":"/tmp","env":{"K":"v"}}`},
				Candidates: []string{
					"@/h/.config/opencode/opencode.json loaded adapter=true proj=false",
					"@/p/opencode.json missing adapter=true proj=true",
				},
			}},
		{name: "translation and skipping", kind: "opencode",
			files: map[string]string{"p/opencode.json": `{
				// opencode allows comments
				"mcp": {
					"off": {"type": "local", "command": ["x"], "enabled": false},
					"on": {"type": "local", "command": ["x"], "enabled": true, "environment": {"N": 1}},
					"r": {"type": "remote", "url": "https://r", "headers": {"A": "b", "N": 2}, "oauth": {"clientId": "id", "scope": 3, "skipIssuerMetadataValidation": true, "extra": "e"}},
					"noauth": {"type": "remote", "url": "https://n", "oauth": false},
					"trueauth": {"type": "remote", "url": "https://t", "oauth": true, "headers": {"N": 1}},
					"emptycmd": {"type": "local", "command": []},
					"mixedcmd": {"type": "local", "command": ["x", 1]},
					"strcmd": {"type": "local", "command": "x"},
					"nourl": {"type": "remote"},
					"notype": {"command": ["x"], "url": "https://u"},
					"scalar": 1,
				},
			}`},
			want: view{
				Servers: []string{
					`noauth @/p/opencode.json adapter=true proj=true {"oauth":false,"url":"https://n"}`,
					`on @/p/opencode.json adapter=true proj=true {"args":[],"command":"x"}`,
					`r @/p/opencode.json adapter=true proj=true {"auth":"oauth","headers":{"A":"b"},"oauth":{"clientId":"id","skipIssuerMetadataValidation":true},"url":"https://r"}`,
					`trueauth @/p/opencode.json adapter=true proj=true {"url":"https://t"}`,
				},
				Candidates: []string{globalMissing, "@/p/opencode.json loaded adapter=true proj=true"},
			}},
		{name: "merge, project wins", kind: "opencode",
			files: map[string]string{
				g: `{"mcp": {
					"keep": {"type": "local", "command": ["g"]},
					"env": {"type": "local", "command": ["s", "1"], "environment": {"A": "g", "B": "g"}, "cwd": "/g"},
					"cmd": {"type": "local", "command": ["s", "1"], "environment": {"A": "g"}, "cwd": "/g"},
					"typ": {"type": "remote", "url": "https://g", "headers": {"H": "g"}, "command": ["zz"]},
					"url": {"type": "remote", "url": "https://g", "headers": {"H": "g"}, "oauth": {"clientId": "g"}},
					"hdr": {"type": "remote", "url": "https://g", "headers": {"H": "g", "I": "g"}, "oauth": {"clientId": "g", "scope": "s"}},
					"disable": {"type": "local", "command": ["d"]},
					"enable": {"type": "local", "command": ["e"], "enabled": false}
				}}`,
				"p/opencode.json": `{"mcp": {
					"env": {"command": ["s", "1"], "environment": {"B": "p"}},
					"cmd": {"command": ["s", "2"]},
					"typ": {"type": "local", "command": ["p"]},
					"url": {"url": "https://p"},
					"hdr": {"headers": {"I": "p"}, "oauth": {"scope": "p"}},
					"disable": {"enabled": false},
					"enable": {"enabled": true}
				}}`,
			},
			want: view{
				Servers: []string{
					`cmd @/p/opencode.json adapter=true proj=true {"args":["2"],"command":"s"}`,
					`enable @/p/opencode.json adapter=true proj=true {"args":[],"command":"e"}`,
					`env @/p/opencode.json adapter=true proj=true {"args":["1"],"command":"s","cwd":"/g","env":{"A":"g","B":"p"}}`,
					`hdr @/p/opencode.json adapter=true proj=true {"auth":"oauth","headers":{"H":"g","I":"p"},"oauth":{"clientId":"g","scope":"p"},"url":"https://g"}`,
					`keep @/h/.config/opencode/opencode.json adapter=true proj=false {"args":[],"command":"g"}`,
					`typ @/p/opencode.json adapter=true proj=true {"args":[],"command":"p"}`,
					`url @/p/opencode.json adapter=true proj=true {"url":"https://p"}`,
				},
				Candidates: []string{
					"@/h/.config/opencode/opencode.json loaded adapter=true proj=false",
					"@/p/opencode.json loaded adapter=true proj=true",
				},
			}},
		{name: "broken project skipped, global used", kind: "opencode",
			files: map[string]string{
				g:                 `{"mcp": {"a": {"type": "remote", "url": "https://a"}}}`,
				"p/opencode.json": "{\"mcp\": {\"a\": {\"url\": \"https://evil\"}}",
			},
			want: view{
				Servers: []string{`a @/h/.config/opencode/opencode.json adapter=true proj=false {"url":"https://a"}`},
				Candidates: []string{
					"@/h/.config/opencode/opencode.json loaded adapter=true proj=false",
					"@/p/opencode.json unreadable adapter=true proj=true at 1:39",
				},
			}},
		{name: "non-object file ignored", kind: "opencode",
			files: map[string]string{g: `[]`, "p/opencode.json": `null`},
			want: view{Candidates: []string{
				"@/h/.config/opencode/opencode.json loaded adapter=true proj=false",
				"@/p/opencode.json loaded adapter=true proj=true",
			}}},
		{name: "walk up to the nearest opencode.json below the git root", kind: "opencode", cwd: "p/a/b",
			files: map[string]string{
				"p/.git":            "DIR",
				"p/opencode.json":   `{"mcp": {"root": {"type": "remote", "url": "https://root"}}}`,
				"p/a/opencode.json": `{"mcp": {"mid": {"type": "remote", "url": "https://mid"}}}`,
			},
			want: view{
				Servers: []string{`mid @/p/a/opencode.json adapter=true proj=true {"url":"https://mid"}`},
				Candidates: []string{
					globalMissing,
					"@/p/a/opencode.json loaded adapter=true proj=true",
				},
			}},
		{name: "git root's file when none below", kind: "opencode", cwd: "p/a/b",
			files: map[string]string{
				"p/.git":          "gitdir: elsewhere\n", // a worktree's .git file counts
				"opencode.json":   `{"mcp": {"above": {"type": "remote", "url": "https://above"}}}`,
				"p/opencode.json": `{"mcp": {"root": {"type": "remote", "url": "https://root"}}}`,
			},
			want: view{
				Servers: []string{`root @/p/opencode.json adapter=true proj=true {"url":"https://root"}`},
				Candidates: []string{
					globalMissing,
					"@/p/opencode.json loaded adapter=true proj=true",
				},
			}},
		{name: "git root's missing file stops the walk", kind: "opencode", cwd: "p/a",
			files: map[string]string{
				"p/.git":        "DIR",
				"opencode.json": `{"mcp": {"above": {"type": "remote", "url": "https://above"}}}`,
			},
			want: view{Candidates: []string{
				globalMissing,
				"@/p/opencode.json missing adapter=true proj=true",
			}}},
		{name: "without git only the cwd's file", kind: "opencode", cwd: "p/a",
			files: map[string]string{"p/opencode.json": `{"mcp": {"root": {"type": "remote", "url": "https://root"}}}`},
			want: view{Candidates: []string{
				globalMissing,
				"@/p/a/opencode.json missing adapter=true proj=true",
			}}},
	})
}

func TestOpencodeConsulted(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tree(t, root, map[string]string{"h": "DIR", "p/.git": "DIR", "p/a/b": "DIR"})
	res := Read("opencode", filepath.Join(root, "h"), filepath.Join(root, "p/a/b"))
	var got []string
	for _, p := range res.Consulted {
		got = append(got, strings.Replace(p, root, "@", 1))
	}
	want := []string{
		"@/p/a/b/.git", "@/p/a/.git", "@/p/.git",
		"@/p/a/b/opencode.json", "@/p/a/opencode.json", "@/p/opencode.json",
		"@/h/.config/opencode/opencode.json",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Consulted (-want +got)\n%s", diff)
	}

	// Without a git root every ancestor's .git is consulted.
	root2, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	res = Read("opencode", filepath.Join(root2, "h"), root2)
	n := 0
	for _, p := range res.Consulted {
		if filepath.Base(p) == ".git" {
			n++
		}
	}
	if depth := strings.Count(root2, string(filepath.Separator)); n != depth+1 {
		// When the test runs inside some git work tree the walk stops early.
		t.Logf("%d .git paths consulted for a depth of %d", n, depth)
	}
	if n == 0 {
		t.Error("no .git path consulted")
	}
}

func TestMergeOpencodeDoesNotMutate(t *testing.T) {
	t.Parallel()
	base := map[string]any{"mcp": map[string]any{"a": map[string]any{"type": "local", "environment": map[string]any{"A": "1"}}}, "x": 1.0}
	next := map[string]any{"mcp": map[string]any{"a": map[string]any{"type": "remote", "environment": map[string]any{"B": "2"}}}}
	before := fmt.Sprint(base)
	got := mergeOpencode(base, next)
	if after := fmt.Sprint(base); after != before {
		t.Error("base changed")
	}
	want := map[string]any{"mcp": map[string]any{"a": map[string]any{"type": "remote", "environment": map[string]any{"B": "2"}}}, "x": 1.0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

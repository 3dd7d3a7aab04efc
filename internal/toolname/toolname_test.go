package toolname

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The examples the reference (A.4) records from runs of the real adapter.
func TestReferenceExamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, got, want string
	}{
		{"repo-tools echo", ToolName(Prefix("repo-tools", ModeServer), "echo"), "repo-tools_echo"},
		{"dot and space escaped", ToolName(Prefix("a.b c", ModeServer), "echo"), "a_2e_b_20_c_echo"},
		{"short drops -mcp", ToolName(Prefix("foo-mcp", ModeShort), "echo"), "foo_echo"},
		{"short mymcp", Prefix("mymcp", ModeShort), "my"},
		{"short foo_mcp keeps underscore", ToolName(Prefix("foo_mcp", ModeShort), "x"), "foo__x"},
		{"short mcp", Prefix("mcp", ModeShort), "mcp"},
		{"no double prefix", ToolName(Prefix("github", ModeServer), "github_search"), "github_search"},
		{"namespace", NamespaceTool("repo-tools"), "mcp__repo_tools"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestEscape(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain_Name-09", "plain_Name-09"},
		{"a.b", "a_2e_b"},
		{"a b", "a_20_b"},
		{"ü", "_fc_"},
		{"😀", "_1f600_"},
		{"a/b", "a_2f_b"},
		{"\xff", "_fffd_"}, // invalid UTF-8 reads as U+FFFD
	}
	for _, tt := range tests {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPrefix(t *testing.T) {
	t.Parallel()
	tests := []struct{ server, mode, want string }{
		{"repo-tools", ModeServer, "repo-tools"},
		{"repo-tools", "", "repo-tools"},
		{"repo-tools", "bogus", "repo-tools"},
		{"repo-tools", "None", "repo-tools"}, // modes are case-sensitive
		{"repo-tools", ModeNone, ""},
		{"repo-tools", ModeMCP, "mcp__repo-tools"},
		{"a.b c", ModeMCP, "mcp__a_2e_b_20_c"},
		{"foo-mcp", ModeShort, "foo"},
		{"foo-MCP", ModeShort, "foo"},
		{"fooMcp", ModeShort, "foo"},
		{"foo--mcp", ModeShort, "foo-"},
		{"foo_mcp", ModeShort, "foo_"},
		{"mcp", ModeShort, "mcp"},
		{"-mcp", ModeShort, "mcp"},
		{"mcpmcp", ModeShort, "mcp"},
		{"foo", ModeShort, "foo"},
		{"a.b-mcp", ModeShort, "a_2e_b"},
		{"", ModeServer, ""},
		{"", ModeShort, "mcp"},
		{"", ModeMCP, "mcp__"},
	}
	for _, tt := range tests {
		if got := Prefix(tt.server, tt.mode); got != tt.want {
			t.Errorf("Prefix(%q, %q) = %q, want %q", tt.server, tt.mode, got, tt.want)
		}
	}
}

func TestToolName(t *testing.T) {
	t.Parallel()
	tests := []struct{ prefix, tool, want string }{
		{"srv", "echo", "srv_echo"},
		{"srv", "a.b.c", "srv_a_b_c"},
		{"srv", "my-tool", "srv_my-tool"},
		{"srv", "srv_echo", "srv_echo"},
		{"srv", "srv.echo", "srv_echo"}, // the dot becomes '_' first
		{"srv", "srv_", "srv_srv_"},     // nothing after the prefix: prefixed again
		{"srv", "srvecho", "srv_srvecho"},
		{"srv", "", "srv_"},
		{"", "a.b", "a_b"},
		{"", "echo", "echo"},
		{"mcp__srv", "mcp__srv_x", "mcp__srv_x"},
	}
	for _, tt := range tests {
		if got := ToolName(tt.prefix, tt.tool); got != tt.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tt.prefix, tt.tool, got, tt.want)
		}
	}
}

func TestResourceTool(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", "read_resource"},
		{"README.md", "read_readme_md"},
		{"1st file", "read_resource_1st_file"},
		{"__x__", "read_x"},
		{"a--b..c", "read_a_b_c"},
		{"---", "read_resource"},
		{"Ünï", "read_n"},
		{"9", "read_resource_9"},
		{" 9", "read_resource_9"},
	}
	for _, tt := range tests {
		if got := ResourceTool(tt.in); got != tt.want {
			t.Errorf("ResourceTool(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNamespace(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 60)
	tests := []struct{ in, want string }{
		{"repo-tools", "repo_tools"},
		{"github", "github"},
		{"a.b c", "_mcpns_a_2e_b_20_c"},
		{"a_b.c", "_mcpns_a__b_2e_c"},
		{"_mcpns_x", "_mcpns___mcpns__x"}, // the marker itself forces encoding
		{"", ""},
		{strings.Repeat("a", 59), strings.Repeat("a", 59)},
		{long, "_mcpns__h_" + strings.Repeat("a", 32) + "_" + sha16(long)},
	}
	for _, tt := range tests {
		got := Namespace(tt.in)
		if got != tt.want {
			t.Errorf("Namespace(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if len(got) > 59 {
			t.Errorf("Namespace(%q) is %d long", tt.in, len(got))
		}
	}
}

func TestEffectiveMode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		server, settings any
		want             string
	}{
		{nil, nil, ModeServer},
		{nil, "none", ModeNone},
		{"short", "none", ModeShort},
		{"none", "server", ModeNone},
		{"mcp", nil, ModeMCP},
		{"bogus", "none", ModeServer}, // a set value wins, and unknown means server
		{false, "none", ModeServer},   // so does a non-string
		{nil, 5.0, ModeServer},
		{"", "none", ModeServer},
	}
	for _, tt := range tests {
		if got := EffectiveMode(tt.server, tt.settings); got != tt.want {
			t.Errorf("EffectiveMode(%v, %v) = %q, want %q", tt.server, tt.settings, got, tt.want)
		}
	}
}

func TestCandidateNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		server, mode, tool string
		want               []string
	}{
		{"my-srv", ModeServer, "a-b", []string{
			"a-b", "my-srv_a-b", "mcp__my-srv_a-b",
			"a_b", "my-srv_a_b", "mcp__my-srv_a_b",
			"my_2d_srv_a_b", "mcp__my_2d_srv_a_b", // legacy: hyphens in the server name escaped
			"my_srv_a_b", "mcp__my_srv_a_b",
		}},
		{"foo-mcp", ModeNone, "x", []string{
			"x", "foo-mcp_x", "foo_x", "mcp__foo-mcp_x",
			"foo_2d_mcp_x", "mcp__foo_2d_mcp_x", "foo_mcp_x", "mcp__foo_mcp_x",
		}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, CandidateNames(tt.server, tt.mode, tt.tool)); diff != "" {
			t.Errorf("CandidateNames(%q, %q, %q) (-want +got):\n%s", tt.server, tt.mode, tt.tool, diff)
		}
	}
}

type golden struct {
	Prefix     [][]string `json:"prefix"`
	Tool       [][]string `json:"tool"`
	Namespace  [][]string `json:"namespace"`
	Resource   [][]string `json:"resource"`
	Candidates [][]string `json:"candidates"`
}

func loadGolden(t testing.TB) golden {
	t.Helper()
	data, err := os.ReadFile("testdata/adapter_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestAdapterGolden compares every forward function with the output of the
// published adapter's own functions (testdata/gen_golden.mjs).
func TestAdapterGolden(t *testing.T) {
	t.Parallel()
	g := loadGolden(t)
	if len(g.Prefix) == 0 || len(g.Tool) == 0 || len(g.Namespace) == 0 || len(g.Resource) == 0 || len(g.Candidates) == 0 {
		t.Fatal("golden file has an empty section")
	}
	for _, r := range g.Prefix {
		if got := Prefix(r[0], r[1]); got != r[2] {
			t.Errorf("Prefix(%q, %q) = %q, adapter %q", r[0], r[1], got, r[2])
		}
	}
	for _, r := range g.Tool {
		if got := ToolName(Prefix(r[0], r[1]), r[2]); got != r[3] {
			t.Errorf("ToolName(Prefix(%q, %q), %q) = %q, adapter %q", r[0], r[1], r[2], got, r[3])
		}
	}
	for _, r := range g.Namespace {
		if got := Namespace(r[0]); got != r[1] {
			t.Errorf("Namespace(%q) = %q, adapter %q", r[0], got, r[1])
		}
	}
	for _, r := range g.Resource {
		if got := ResourceTool(r[0]); got != r[1] {
			t.Errorf("ResourceTool(%q) = %q, adapter %q", r[0], got, r[1])
		}
	}
	for _, r := range g.Candidates {
		if diff := cmp.Diff(r[3:], CandidateNames(r[0], r[1], r[2])); diff != "" {
			t.Errorf("CandidateNames(%q, %q, %q) (-adapter +ours):\n%s", r[0], r[1], r[2], diff)
		}
	}
}

func sha16(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:16]
}

package toolname

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func direct(name, mode string, tools ...string) Server {
	if tools == nil {
		tools = []string{}
	}
	return Server{Name: name, Mode: mode, Tools: tools, DirectTools: true}
}

func TestOwnersOfDirect(t *testing.T) {
	t.Parallel()
	uncachedNone := Server{Name: "mystery", Mode: ModeNone, DirectTools: true}
	tests := []struct {
		name    string
		tool    string
		servers []Server
		want    []string
	}{
		{"server mode", "repo-tools_echo", []Server{direct("repo-tools", ModeServer, "echo"), direct("other", ModeServer, "echo")}, []string{"repo-tools"}},
		{"server mode, tool not cached still owned by prefix", "repo-tools_new", []Server{direct("repo-tools", ModeServer, "echo")}, []string{"repo-tools"}},
		{"escaped name", "a_2e_b_20_c_echo", []Server{direct("a.b c", ModeServer, "echo")}, []string{"a.b c"}},
		{"dots in tool", "srv_a_b", []Server{direct("srv", ModeServer, "a.b")}, []string{"srv"}},
		{"short strips -mcp", "foo_echo", []Server{direct("foo-mcp", ModeShort, "echo")}, []string{"foo-mcp"}},
		{"short collision foo and foo-mcp", "foo_echo", []Server{direct("foo", ModeShort, "echo"), direct("foo-mcp", ModeShort, "echo")}, []string{"foo", "foo-mcp"}},
		{"short collision under any mode", "foo_echo", []Server{direct("foo", ModeServer, "echo"), direct("foo-mcp", ModeServer, "echo")}, []string{"foo", "foo-mcp"}},
		{"short foo_mcp", "foo__x", []Server{direct("foo_mcp", ModeShort, "x"), direct("foo", ModeShort, "x")}, []string{"foo_mcp", "foo"}},
		{"short server named mcp", "mcp_x", []Server{direct("mcp", ModeShort, "x")}, []string{"mcp"}},
		{"mcp mode", "mcp__srv_x", []Server{direct("srv", ModeMCP, "x"), direct("other", ModeServer)}, []string{"srv"}},
		{"server named mcp could own mcp__ names", "mcp__srv_x", []Server{direct("srv", ModeMCP, "x"), direct("mcp", ModeServer)}, []string{"srv", "mcp"}},
		{"mcp mode does not claim a server-mode name", "srv_x", []Server{direct("srv-2", ModeMCP, "x")}, nil},
		{"no double prefix", "github_search", []Server{direct("github", ModeServer, "github_search"), direct("git", ModeServer, "hub_search")}, []string{"github"}},
		{"prefix then underscore required", "githubx_search", []Server{direct("github", ModeServer, "x_search")}, nil},
		{"longer prefix also listed", "foo_bar_x", []Server{direct("foo", ModeServer, "bar_x"), direct("foo_bar", ModeServer, "x")}, []string{"foo", "foo_bar"}},
		{"none with cache: exact", "echo", []Server{direct("a", ModeNone, "echo"), direct("b", ModeNone, "other")}, []string{"a"}},
		{"none with cache: dots", "a_b", []Server{direct("a", ModeNone, "a.b")}, []string{"a"}},
		{"none with resource", "read_readme_md", []Server{{Name: "docs", Mode: ModeNone, Resources: []string{"README.md"}, DirectTools: true}}, []string{"docs"}},
		{"none, empty cache owns nothing", "echo", []Server{direct("a", ModeNone)}, nil},
		{"none without cache: cannot tell", "echo", []Server{uncachedNone, direct("a", ModeNone, "other")}, []string{"mystery"}},
		{"server named empty behaves as none", "echo", []Server{direct("", ModeServer, "echo")}, []string{""}},
		{"none server still owns its named prefix", "a_zzz", []Server{direct("a", ModeNone, "echo")}, []string{"a"}},
		{"no direct tools: not an owner", "repo-tools_echo", []Server{{Name: "repo-tools", Mode: ModeServer, Tools: []string{"echo"}}}, nil},
		{"builtin name never registered", "bash", []Server{uncachedNone, direct("a", ModeNone, "bash")}, nil},
		{"unknown mode acts as server", "srv_x", []Server{direct("srv", "weird", "x")}, []string{"srv"}},
		{"no servers", "x", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, OwnersOfDirect(tt.tool, tt.servers)); diff != "" {
				t.Errorf("OwnersOfDirect(%q) (-want +got):\n%s", tt.tool, diff)
			}
		})
	}
}

func TestOwnerOfNamespace(t *testing.T) {
	t.Parallel()
	long1 := strings.Repeat("x", 70)
	long2 := strings.Repeat("x", 69) + "y"
	tests := []struct {
		tool    string
		servers []string
		want    string
		ok      bool
	}{
		{"mcp__repo_tools", []string{"repo-tools", "other"}, "repo-tools", true},
		{"mcp__repo_tools", []string{"repo-tools", "repo_tools"}, "", false}, // both normalise to repo_tools
		{"mcp___mcpns_a_2e_b_20_c", []string{"a.b c"}, "a.b c", true},
		{"mcp__" + Namespace(long1), []string{long1, long2}, long1, true},
		{"mcp__" + Namespace(long2), []string{long1, long2}, long2, true},
		{"repo_tools", []string{"repo-tools"}, "", false},
		{"mcp__nobody", []string{"repo-tools"}, "", false},
		{"mcp__", []string{""}, "", true},
	}
	for _, tt := range tests {
		got, ok := OwnerOfNamespace(tt.tool, tt.servers)
		if got != tt.want || ok != tt.ok {
			t.Errorf("OwnerOfNamespace(%q, %q) = %q, %v; want %q, %v", tt.tool, tt.servers, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCouldServe(t *testing.T) {
	t.Parallel()
	uncached := func(name, mode string) Server { return Server{Name: name, Mode: mode} }
	cached := func(name, mode string, tools ...string) Server {
		return Server{Name: name, Mode: mode, Tools: append([]string{}, tools...)}
	}
	tests := []struct {
		name    string
		tool    string
		servers []Server
		want    []string
	}{
		{"original name from cache", "echo", []Server{cached("repo-tools", ModeServer, "echo"), cached("b", ModeServer, "other")}, []string{"repo-tools"}},
		{"two servers with the same original", "echo", []Server{cached("a", ModeServer, "echo"), cached("b", ModeServer, "echo")}, []string{"a", "b"}},
		{"prefix without cache", "repo-tools_anything", []Server{uncached("repo-tools", ModeServer), uncached("other", ModeServer)}, []string{"repo-tools"}},
		{"prefix of another mode", "foo_x", []Server{uncached("foo-mcp", ModeServer)}, []string{"foo-mcp"}},
		{"mcp-mode prefix", "mcp__srv_x", []Server{uncached("srv", ModeServer)}, []string{"srv"}},
		{"hyphen-normalised prefix", "my_srv_x", []Server{uncached("my-srv", ModeServer)}, []string{"my-srv"}},
		{"legacy prefix", "my_2d_srv_x", []Server{uncached("my-srv", ModeServer)}, []string{"my-srv"}},
		{"hyphen-normalised original", "my_tool", []Server{cached("a", ModeNone, "my-tool")}, []string{"a"}},
		{"dots in original", "a_b", []Server{cached("s", ModeNone, "a.b")}, []string{"s"}},
		{"resource", "read_readme_md", []Server{{Name: "docs", Mode: ModeNone, Resources: []string{"README.md"}}}, []string{"docs"}},
		{"none without cache and no prefix: never started", "echo", []Server{uncached("srv", ModeNone)}, nil},
		{"unrelated", "zzz", []Server{cached("a", ModeServer, "echo"), uncached("b", ModeShort)}, nil},
		{"short collision", "foo_echo", []Server{uncached("foo", ModeShort), uncached("foo-mcp", ModeShort)}, []string{"foo", "foo-mcp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, CouldServe(tt.tool, tt.servers)); diff != "" {
				t.Errorf("CouldServe(%q) (-want +got):\n%s", tt.tool, diff)
			}
		})
	}
}

// Every candidate form the adapter accepts for a cached tool, and every
// prefixed name a server could produce once connected, is covered.
func TestCouldServeCoversAdapterCandidates(t *testing.T) {
	t.Parallel()
	g := loadGolden(t)
	for _, r := range g.Candidates {
		s := Server{Name: r[0], Mode: r[1], Tools: []string{r[2]}}
		for _, c := range r[3:] {
			if !slices.Contains(CouldServe(c, []Server{s}), s.Name) {
				t.Errorf("CouldServe(%q) misses server %q (mode %s, tool %q)", c, s.Name, s.Mode, r[2])
			}
		}
	}
	for _, r := range g.Tool {
		if r[1] == ModeNone || Prefix(r[0], r[1]) == "" {
			continue
		}
		s := Server{Name: r[0], Mode: ModeNone} // no cache, and a different own mode
		if !slices.Contains(CouldServe(r[3], []Server{s}), s.Name) {
			t.Errorf("CouldServe(%q) misses uncached server %q (named under %s)", r[3], r[0], r[1])
		}
	}
}

func TestOwnersOfDirectCoversAdapterNames(t *testing.T) {
	t.Parallel()
	g := loadGolden(t)
	for _, r := range g.Tool {
		if builtin[r[3]] {
			continue
		}
		s := direct(r[0], r[1], r[2])
		if !slices.Contains(OwnersOfDirect(r[3], []Server{s}), s.Name) {
			t.Errorf("OwnersOfDirect(%q) misses %q (mode %s, tool %q)", r[3], r[0], r[1], r[2])
		}
	}
}

func FuzzNamespace(f *testing.F) {
	for _, s := range []string{"repo-tools", "a.b c", "_mcpns_x", "", strings.Repeat("a", 60), "ü-😀", "\xff", "a_b", "a-b"} {
		f.Add(s, "other")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		na := Namespace(a)
		if len(na) > nsMaxLen {
			t.Fatalf("Namespace(%q) = %q is longer than %d", a, na, nsMaxLen)
		}
		for i := 0; i < len(na); i++ {
			c := na[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
				t.Fatalf("Namespace(%q) = %q has %q", a, na, c)
			}
		}
		if Namespace(a) != na {
			t.Fatal("not deterministic")
		}
		// Distinct names collide only when they agree once hyphens are
		// underscores (and invalid UTF-8 reads as U+FFFD).
		norm := func(s string) string { return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "-", "_") }
		if Namespace(b) == na && norm(a) != norm(b) && !strings.Contains(a, "\uFFFD") && !strings.Contains(b, "\uFFFD") {
			t.Fatalf("Namespace(%q) == Namespace(%q) == %q", a, b, na)
		}
		if owner, ok := OwnerOfNamespace("mcp__"+na, []string{a}); !ok || owner != a {
			t.Fatalf("OwnerOfNamespace(%q) = %q, %v", "mcp__"+na, owner, ok)
		}
	})
}

func FuzzPrefixRoundTrip(f *testing.F) {
	modes := []string{ModeServer, ModeShort, ModeMCP, ModeNone, "", "bogus"}
	f.Add("repo-tools", uint8(0), "echo", "other", "x")
	f.Add("foo-mcp", uint8(1), "echo", "foo", "echo")
	f.Add("github", uint8(0), "github_search", "git", "hub_search")
	f.Add("a.b c", uint8(2), "x.y", "a", "b")
	f.Add("", uint8(0), "echo", "", "")
	f.Add("srv", uint8(3), "a.b", "srv2", "a_b")
	f.Add("my-srv", uint8(0), "x-y", "my_srv_x", "y")
	f.Add("a_b-mcp", uint8(1), "t", "a_5f_b_t", "")
	f.Add("ü.mcp", uint8(1), "t", "_fc__2e__t", "")
	f.Fuzz(func(t *testing.T, server string, m uint8, tool, other, otherTool string) {
		mode := modes[int(m)%len(modes)]
		name := ToolName(Prefix(server, mode), tool)
		servers := []Server{direct(other, ModeNone, otherTool), direct(server, mode, tool)}
		if !builtin[name] && !slices.Contains(OwnersOfDirect(name, servers), server) {
			t.Fatalf("OwnersOfDirect(%q) = %q misses %q (mode %q, tool %q)", name, OwnersOfDirect(name, servers), server, mode, tool)
		}
		for _, c := range CandidateNames(server, mode, tool) {
			if !slices.Contains(CouldServe(c, servers), server) {
				t.Fatalf("CouldServe(%q) misses %q (mode %q, tool %q)", c, server, mode, tool)
			}
		}
		// The allocation-free matcher agrees with the built prefix, plain or
		// legacy, exact or with '-' read as '_'.
		fold := func(s string) string { return strings.ReplaceAll(s, "-", "_") }
		for _, nm := range namedModes {
			for _, legacy := range []bool{false, true} {
				p := prefix(server, nm, legacy)
				want := p != "" && strings.HasPrefix(other, p+"_")
				if got := startsWithPrefix(other, server, nm, legacy, false); got != want {
					t.Fatalf("startsWithPrefix(%q, %q, %s, legacy=%v) = %v, want %v", other, server, nm, legacy, got, want)
				}
				want = p != "" && strings.HasPrefix(fold(other), fold(p)+"_")
				if got := startsWithPrefix(other, server, nm, legacy, true); got != want {
					t.Fatalf("folded startsWithPrefix(%q, %q, %s, legacy=%v) = %v, want %v", other, server, nm, legacy, got, want)
				}
				if p != "" && !startsWithPrefix(p+"_x", server, nm, legacy, false) {
					t.Fatalf("prefix %q of %q (legacy=%v) not matched", p, server, legacy)
				}
			}
		}
	})
}

func benchServers(n int) []Server {
	servers := make([]Server, n)
	modes := []string{ModeServer, ModeShort, ModeMCP, ModeServer}
	for i := range servers {
		tools := make([]string, 20)
		for j := range tools {
			tools[j] = fmt.Sprintf("tool_%d", j)
		}
		servers[i] = Server{Name: fmt.Sprintf("server-%d-mcp", i), Mode: modes[i%len(modes)], Tools: tools, DirectTools: true}
	}
	return servers
}

func BenchmarkOwnersOfDirect(b *testing.B) {
	servers := benchServers(100)
	for _, bc := range []struct{ name, tool string }{
		{"hit", "server-57-mcp_tool_3"},
		{"miss", "unrelated_tool"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				OwnersOfDirect(bc.tool, servers)
			}
		})
	}
	b.Run("none-mode", func(b *testing.B) {
		none := benchServers(100)
		for i := range none {
			none[i].Mode = ModeNone
		}
		b.ReportAllocs()
		for b.Loop() {
			OwnersOfDirect("tool_19", none)
		}
	})
}

func BenchmarkCouldServe(b *testing.B) {
	servers := benchServers(100)
	b.ReportAllocs()
	for b.Loop() {
		CouldServe("server-57-mcp_tool_3", servers)
	}
}

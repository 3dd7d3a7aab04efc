package imports

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/pelletier/go-toml/v2"
)

// tomlCases are documents for the parts decoder: what a codex file of many
// servers looks like, and every way the parts could differ from the whole
// (a header inside a string, a table defined twice, a table reached from
// outside its run, a head that defines mcp_servers, other headers after
// the servers'); inParts says whether the parts may answer.
var tomlCases = []struct {
	name, doc string
	inParts   bool
}{
	{"servers", "model = \"o3\"\n[profiles.x]\nk = 1\n\n[mcp_servers.a]\ncommand = \"npx\"\nargs = [\"-y\", \"x\"]\nenv = { K = \"V\" }\n# c\n[mcp_servers.b]\nurl = \"https://b\"\nenv.X.y = 2\n\n[mcp_servers.c-1_D]\n", true},
	{"crlf", "[mcp_servers.a]\r\ncommand = \"a\"\r\n[mcp_servers.b] \t\r\nn = 1979-05-27T07:32:00Z\r\n", true},
	{"no head", "[mcp_servers.a]\n[mcp_servers.b]\n", true},
	{"header in a string", "[mcp_servers.a]\nx = \"\"\"\n[mcp_servers.b]\ny = \"\"\"\n", false},
	{"header in a literal string", "[mcp_servers.a]\nx = '''\n[mcp_servers.b]\n'''\n", false},
	{"twice", "[mcp_servers.a]\nk = 1\n[mcp_servers.b]\n[mcp_servers.a]\nk = 2\n", false},
	{"super-table twice", "[mcp_servers.a]\n[mcp_servers]\n[mcp_servers.b]\n[mcp_servers]\n", false},
	{"sub-table", "[mcp_servers.a]\n[mcp_servers.a.env]\nK = 1\n", false},
	{"another table", "[mcp_servers.a]\n[other]\nk = 1\n[mcp_servers.b]\n[other]\nk = 2\n", false},
	{"head defines them", "mcp_servers.b.command = \"x\"\n[mcp_servers.a]\n", false},
	{"head has the table", "[mcp_servers]\nz = 1\n[mcp_servers.a]\n", false},
	{"quoted", "[mcp_servers.a]\n[mcp_servers.\"b\"]\n", false},
	{"array continues", "[mcp_servers.a]\nx = [\n[1],\n]\n", false},
	{"dotted key reaching nowhere", "[mcp_servers.a]\nmcp_servers.b.x = 1\n[mcp_servers.b]\n", true},
	{"broken", "[mcp_servers.a]\nx = \n[mcp_servers.b]\n", false},
	{"header then text", "[mcp_servers.a] x = 1\n[mcp_servers.b]\n", false},
	{"unsafe integer", "[mcp_servers.a]\nn = 9007199254740993\n[mcp_servers.b]\nf = nan\n", true},
}

func wholeTOML(data []byte) (map[string]any, error) {
	var m map[string]any
	err := toml.Unmarshal(data, &m)
	return m, err
}

// TestTOMLInParts: each case decodes in parts when it should, and as a
// whole when it must; in parts it gives what the whole gives.
func TestTOMLInParts(t *testing.T) {
	t.Parallel()
	for _, tc := range tomlCases {
		for _, size := range []int{1, 2, tomlPartSize} {
			got, ok := unmarshalTOMLInParts([]byte(tc.doc), 1, size)
			if ok != tc.inParts {
				t.Errorf("%s, runs of %d: in parts %v, want %v", tc.name, size, ok, tc.inParts)
			}
			want, err := wholeTOML([]byte(tc.doc))
			if ok && (err != nil || !cmp.Equal(got, want, cmpopts.EquateNaNs())) {
				t.Errorf("%s, runs of %d: in parts %#v; whole %#v, %v", tc.name, size, got, want, err)
			}
		}
	}
	// a codex file of many servers, past the size that takes the parts,
	// through parseTOML
	var b strings.Builder
	b.WriteString("model = \"o3\"\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "[mcp_servers.s%d]\ncommand = \"node\"\nargs = [\"s%d.js\"]\nenv = { T = \"${T_%d}\" }\n", i, i, i)
	}
	data := []byte(b.String())
	if _, ok := unmarshalTOMLInParts(data, tomlPartsFrom, tomlPartSize); !ok {
		t.Fatal("1,000 servers are not decoded in parts")
	}
	got, err := parseTOML(data)
	whole, werr := wholeTOML(data)
	if err != nil || werr != nil {
		t.Fatal(err, werr)
	}
	want, _ := jsValue(whole)
	if !cmp.Equal(got, want) {
		t.Error("1,000 servers in parts differ from the whole")
	}
}

// FuzzTOMLInParts: wherever the parts answer (in runs of one to three
// tables), the whole document decodes without error to the same value.
func FuzzTOMLInParts(f *testing.F) {
	for _, tc := range tomlCases {
		f.Add([]byte(tc.doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := unmarshalTOMLInParts(data, 1, 1+len(data)%3)
		if !ok {
			return
		}
		want, err := wholeTOML(data)
		if err != nil {
			t.Fatalf("%q: the parts decode, the whole fails: %v", data, err)
		}
		if !cmp.Equal(got, want, cmpopts.EquateNaNs()) {
			t.Fatalf("%q: in parts %#v, whole %#v", data, got, want)
		}
	})
}

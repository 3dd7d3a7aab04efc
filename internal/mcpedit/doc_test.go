package mcpedit

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, data string
		want       FileError
	}{
		{"syntax", "{\n  \"mcpServers\": {\n    \"a\": {1}\n  }\n}\n", FileError{Path: "f", Line: 3, Column: 11}},
		{"unterminated", "{\"mcpServers\": {", FileError{Path: "f", Line: 1, Column: 17}},
		{"top-level array", "[1, 2]", FileError{Path: "f", Line: 1, Column: 1, Msg: "the top level is not an object"}},
		{"top-level string", "\n\"x\"", FileError{Path: "f", Line: 2, Column: 1, Msg: "the top level is not an object"}},
		{"servers array", "{\n  \"mcpServers\": []\n}", FileError{Path: "f", Line: 2, Column: 17, Msg: "mcpServers is not an object"}},
		{"alias string", "{\"mcp-servers\": \"x\"}", FileError{Path: "f", Line: 1, Column: 17, Msg: "mcp-servers is not an object"}},
		{"settings null", "{\"settings\": null}", FileError{Path: "f", Line: 1, Column: 14, Msg: "settings is not an object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("f", []byte(tt.data))
			var fe *FileError
			if !errors.As(err, &fe) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want a *FileError", err)
			}
			got := *fe
			if tt.want.Msg == "" {
				got.Msg = "" // the syntax message is the parser's
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	t.Parallel()
	for _, data := range []string{"", "  \n", "// c\n", "/* c */", "{}", "{\"mcpServers\": null}", "{\"mcpServers\": {}, \"settings\": {},}"} {
		d, err := Parse("f", []byte(data))
		if err != nil {
			t.Errorf("Parse(%q): %v", data, err)
			continue
		}
		if err := d.SetServer("a", []byte(`{"command":"a"}`)); err != nil {
			t.Errorf("SetServer in %q: %v", data, err)
		}
		if e, ok := d.Entry("a"); !ok || e["command"] != "a" {
			t.Errorf("Entry after SetServer in %q = %v, %v\n%s", data, e, ok, d.Bytes())
		}
	}
}

func TestReadMethods(t *testing.T) {
	t.Parallel()
	d, err := Parse("f", []byte(`{
  "mcpServers": {"b": {"command": "1"}, "a": {"url": "https://x"}, "b": {"command": "2"}, "n": 3},
  "settings": {"directTools": true}
}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b", "n"}, d.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	if e, ok := d.Entry("b"); !ok || e["command"] != "2" {
		t.Errorf("Entry(b) = %v, %v; want the last duplicate", e, ok)
	}
	if e, ok := d.Entry("n"); !ok || e != nil {
		t.Errorf("Entry(n) = %v, %v; want present but not an object", e, ok)
	}
	if _, ok := d.Entry("zz"); ok || d.Has("zz") {
		t.Error("Entry(zz) found")
	}
	if err := d.SetDisabled("n", true); err == nil {
		t.Error("SetDisabled on a non-object entry succeeded")
	}
	if wrote, err := d.SetSettingDefault("directTools", []byte("false")); wrote || err != nil {
		t.Errorf("SetSettingDefault over a set key = %v, %v", wrote, err)
	}
}

func TestClearDisabledKeepsEntryWithComment(t *testing.T) {
	t.Parallel()
	d, _ := Parse("f", []byte("{\"mcpServers\": {\"a\": {\n  \"disabled\": true\n  // keep: why it was off\n}}}"))
	if changed, err := d.ClearDisabled("a"); !changed || err != nil {
		t.Fatalf("ClearDisabled = %v, %v", changed, err)
	}
	if !d.Has("a") {
		t.Errorf("entry with a comment was dropped: %s", d.Bytes())
	}
	if changed, _ := d.ClearDisabled("a"); changed {
		t.Error("second ClearDisabled changed something")
	}
}

func TestBadEntryJSON(t *testing.T) {
	t.Parallel()
	d, _ := Parse("f", nil)
	for _, e := range []string{"", "[1]", "\"x\"", "{", "{} {}"} {
		if err := d.SetServer("a", []byte(e)); err == nil {
			t.Errorf("SetServer(%q) succeeded", e)
		}
	}
	if d.Has("a") {
		t.Errorf("a failed SetServer left an entry: %s", d.Bytes())
	}
}

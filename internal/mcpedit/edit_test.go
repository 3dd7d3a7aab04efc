package mcpedit

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden after sections")

// TestGolden applies the operations in each testdata/*.txtar comment to its
// "before" file and compares the text with its "after" file. Operations, one
// a line: set NAME JSON, remove NAME, disable NAME, enable NAME,
// setting KEY JSON.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var before, after []byte
			afterIdx := -1
			for i, f := range ar.Files {
				switch f.Name {
				case "before":
					before = f.Data
				case "after":
					after, afterIdx = f.Data, i
				}
			}
			d, err := Parse(file, before)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(ar.Comment)), "\n") {
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				op, rest, _ := strings.Cut(line, " ")
				name, arg, _ := strings.Cut(rest, " ")
				switch op {
				case "set":
					err = d.SetServer(name, []byte(arg))
				case "remove":
					d.RemoveServer(name)
				case "disable":
					err = d.SetDisabled(name, true)
				case "enable":
					_, err = d.ClearDisabled(name)
				case "setting":
					_, err = d.SetSettingDefault(name, []byte(arg))
				default:
					t.Fatalf("unknown op %q", op)
				}
				if err != nil {
					t.Fatalf("%s: %v", line, err)
				}
			}
			got := d.Bytes()
			if _, err := Parse("result", got); err != nil {
				t.Fatalf("result does not parse: %v\n%s", err, got)
			}
			if *update {
				if afterIdx < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "after"})
					afterIdx = len(ar.Files) - 1
				}
				ar.Files[afterIdx].Data = got
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(string(after), string(got)); diff != "" {
				t.Errorf("after (-want +got):\n%s", diff)
			}
			if !bytes.Equal(got, d.Bytes()) {
				t.Error("Bytes is not stable")
			}
		})
	}
}

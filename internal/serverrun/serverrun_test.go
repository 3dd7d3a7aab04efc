package serverrun

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFindDenied: the refusals servers print, in Node's, Python's, Go's and
// the shell's words, give the path and whether a grant must let it read or
// write.
func TestFindDenied(t *testing.T) {
	hidden := []string{"/home/u/.ssh", "/home/u/.aws/credentials"}
	cases := []struct {
		stderr string
		want   *Denied
	}{
		{"Error: EACCES: permission denied, open '/home/u/notes/a.md'\n    at Object.openSync", &Denied{"/home/u/notes/a.md", "write"}},
		{"PermissionError: [Errno 13] Permission denied: '/home/u/.ssh/id_rsa'", &Denied{"/home/u/.ssh/id_rsa", "read"}},
		{"open /home/u/.local/share/x/db: read-only file system", &Denied{"/home/u/.local/share/x/db", "write"}},
		{"sh: 1: cannot create /home/u/notes/a.txt: Permission denied", &Denied{"/home/u/notes/a.txt", "write"}},
		{"listening on stdio\nall good", nil},
		{"permission denied (no path given)", nil},
	}
	for _, tc := range cases {
		got, _ := FindDenied([]byte(tc.stderr), hidden)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.stderr, diff)
		}
	}
}

func TestTailKeepsTheEnd(t *testing.T) {
	tl := NewTail(8)
	tl.Write([]byte("0123456789"))
	tl.Write([]byte("ab"))
	if got := string(tl.Bytes()); got != "456789ab" {
		t.Errorf("tail %q", got)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	dir := t.TempDir() + "/state"
	r := Record{Server: "notes", Project: "/p", State: Failed, Code: 1, Denied: &Denied{"/x", "write"}}
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	got, ok := Read(dir)
	r.Version = 1
	if !ok || !cmp.Equal(got, r) {
		t.Errorf("read %+v, %v", got, ok)
	}
}

// TestStderrMadeVisible: a server's stderr reaches the person's terminal
// through get and doctor; an escape sequence in it does not.
func TestStderrMadeVisible(t *testing.T) {
	evil := "Error: EACCES: permission denied, open '/home/u/x\x1b]0;pwned\x07'\n"
	d, line := FindDenied([]byte(evil), nil)
	if d == nil || strings.ContainsAny(d.Path+line, "\x1b\x07") {
		t.Errorf("path %q line %q", d, line)
	}
	if l := LastLine([]byte("ok\n\x1b[2Jcleared\u202e")); strings.ContainsAny(l, "\x1b\u202e") {
		t.Errorf("last line %q", l)
	}
}

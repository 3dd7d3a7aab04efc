package safefile

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReadRefusesHostileFiles (issue 40, item 2): what a repository can put
// where a file is read — a link to /dev/zero, a FIFO no one writes, a huge
// sparse file, a folder — is a named error at once, never a hang or a
// read of everything.
func TestReadRefusesHostileFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil { // sparse: 1 GiB that costs nothing
		t.Fatal(err)
	}
	f.Close()
	grows := filepath.Join(dir, "grows.json")
	os.WriteFile(grows, make([]byte, 100), 0o644)
	for _, tc := range []struct {
		path string
		o    Options
		want error
	}{
		{zero, Options{}, ErrNotRegular},
		{zero, Options{Own: true}, ErrNotRegular}, // followed, /dev checked (root's: refused unless root), then the device
		{fifo, Options{}, ErrNotRegular},
		{fifo, Options{Own: true}, ErrNotRegular},
		{"/dev/zero", Options{}, ErrNotRegular},
		{big, Options{}, ErrTooLarge},
		{grows, Options{Max: 50}, ErrTooLarge},
		{dir, Options{}, ErrNotRegular},
	} {
		start := time.Now()
		done := make(chan error, 1)
		go func() {
			_, err := Read(tc.path, tc.o)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, tc.want) && !(tc.o.Own && os.Geteuid() != 0 && errors.Is(err, ErrUnsafe)) {
				t.Errorf("%s %+v: %v, want %v", tc.path, tc.o, err, tc.want)
			}
			if d := time.Since(start); d > 100*time.Millisecond {
				t.Errorf("%s: the error took %v", tc.path, d)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s %+v: Read hangs", tc.path, tc.o)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing"), Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	os.WriteFile(grows, []byte("{\"a\":\"\xff\"}"), 0o644)
	if _, err := Read(grows, Options{UTF8: true}); !errors.Is(err, ErrInvalidUTF8) {
		t.Errorf("invalid utf-8: %v", err)
	}
	if got, err := Read(grows, Options{}); err != nil || len(got) != 9 {
		t.Errorf("a regular file: %q %v", got, err)
	}
}

// TestStampSeesRewriteWithinOneTick: two writes of the same size whose
// times come out equal (a coarse clock, touch -r) still give different
// stamps while the change time is recent: the stamp holds the content.
func TestStampSeesRewriteWithinOneTick(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "server.mjs")
	os.WriteFile(p, []byte("good"), 0o644)
	a := StampOf(p)
	os.WriteFile(p, []byte("evil"), 0o644)
	b := StampOf(p)
	if a.Settled() {
		t.Fatal("a file written just now is settled")
	}
	a.Ctime, a.Mtime, b.Ctime, b.Mtime = 0, 0, 0, 0 // the same tick
	if a == b {
		t.Fatal("a recent rewrite of the same size with the same times gives the same stamp")
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	if c := StampOf(p); c.Sum == ([32]byte{}) {
		t.Fatal("a changed change time must still hold the content while it is recent")
	}
	if StampOf(filepath.Join(t.TempDir(), "missing")).Exists {
		t.Fatal("a missing path exists")
	}
}

// TestSumAsRead: Sum streams what Read would return and refuses what Read
// refuses, with the same error, without a hang (a FIFO, a device, a
// folder, a file past the limit, a missing one).
func TestSumAsRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	os.WriteFile(big, nil, 0o644)
	os.Truncate(big, 1<<30)
	paths := []string{fifo, big, "/dev/zero", dir, filepath.Join(dir, "missing")}
	for _, n := range []int{0, 1, 4095, 4096, 4097, 65535, 65536, 200000} {
		p := filepath.Join(dir, fmt.Sprintf("f%d", n))
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i*7 + n)
		}
		os.WriteFile(p, data, 0o644)
		paths = append(paths, p)
	}
	for _, p := range paths {
		for _, o := range []Options{{}, {Max: 4096}, {Max: 65536}, {UTF8: true}} {
			done := make(chan struct{})
			go func() {
				defer close(done)
				data, rerr := Read(p, o)
				sum, serr := Sum(p, o)
				if (rerr == nil) != (serr == nil) || rerr != nil && rerr.Error() != serr.Error() {
					t.Errorf("%s %+v: Sum's error %v, Read's %v", p, o, serr, rerr)
				}
				if rerr == nil && sum != sha256.Sum256(data) {
					t.Errorf("%s %+v: Sum is not the digest of what Read reads", p, o)
				}
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("%s %+v: Sum hangs", p, o)
			}
		}
	}
}

package gate

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/approval"
	"github.com/piagent/piagent/internal/digest"
	"github.com/piagent/piagent/internal/safefile"
)

// treeProject is a project whose repository server runs ./bin/serve with
// cwd app: a whole-tree pin over n files, approved.
func treeProject(tb testing.TB, n int) (home, proj string) {
	tb.Helper()
	root := tb.TempDir()
	home, proj = filepath.Join(root, "home"), filepath.Join(root, "proj")
	app := filepath.Join(proj, "app")
	for i := 0; i < n; i++ {
		p := filepath.Join(app, "src", fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%05d.js", i))
		if i == 0 {
			p = filepath.Join(app, "bin", "serve")
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(fmt.Sprintf("// file %d\n", i)), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	os.MkdirAll(home, 0o755)
	os.WriteFile(filepath.Join(proj, ".mcp.json"), []byte(`{"mcpServers":{"custom":{"command":"./bin/serve","cwd":"app"}}}`), 0o644)
	g, err := Load(Options{Home: home, Cwd: proj})
	if err != nil {
		tb.Fatal(err)
	}
	s, _ := g.Server("custom")
	files := map[string]string{}
	for _, p := range s.Pinned {
		files[p.Path] = p.Digest
	}
	st := approval.Open(filepath.Join(home, ".pi", "piagent-mcp-approvals.json"))
	if err := st.Update(func(d *approval.Data) error {
		d.Set(g.Project, "custom", approval.Decision{Decision: "approved", Digest: s.Digest, DecidedAt: "2026-12-03T00:00:00Z", Files: files})
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	return home, proj
}

// A whole-tree pin sees a new untracked file under the cwd at once,
// through the cached gate (the folders are in the signature).
func TestTreePinNewFile(t *testing.T) {
	t.Parallel()
	home, proj := treeProject(t, 50)
	var c Cache
	g, err := c.Get(Options{Home: home, Cwd: proj})
	if err != nil {
		t.Fatal(err)
	}
	// ./bin/serve has no package manifest above it: its package is the
	// whole project (issue 38, item 6), .mcp.json left out
	if s, _ := g.Server("custom"); s.State != Ready || len(s.Pinned) != 50 || s.Pinned[0].Tree != "." {
		t.Fatalf("custom: %s, %d pinned", s.State, len(s.Pinned))
	}
	os.WriteFile(filepath.Join(proj, "app", "src", "d000", "new.js"), []byte("x"), 0o644)
	g, _ = c.Get(Options{Home: home, Cwd: proj})
	if s, _ := g.Server("custom"); s.State != ApprovalChanged || s.Reason != "approved, but app/src/d000/new.js is new since" {
		t.Fatalf("after a new file: %s (%s)", s.State, s.Reason)
	}
}

// BenchmarkTreePin10000: a whole-tree pin over 10,000 files. Cold is the
// first hash (no digest cached); Warm is the re-check before a tool call
// when nothing changed (the cached gate's signature: one stat per file and
// folder); Recompute is a full gate after a change elsewhere, digests
// served from the stat cache.
func BenchmarkTreePin10000(b *testing.B) {
	home, proj := treeProject(b, 10000)
	// a tree as the next session finds it: written more than a moment ago
	time.Sleep(safefile.RacyWindow)
	o := Options{Home: home, Cwd: proj}
	b.Run("Cold", func(b *testing.B) {
		for b.Loop() {
			forgetTreeDigests()
			os.Remove(TreeCachePath(home))
			if _, err := Load(o); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("NewProcess", func(b *testing.B) {
		// as the next piagent-mcp list finds it: nothing in memory, the
		// digests on disk
		if _, err := Load(o); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			forgetTreeDigests()
			if _, err := Load(o); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Warm", func(b *testing.B) {
		var c Cache
		if _, err := c.Get(o); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := c.Get(o); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Recompute", func(b *testing.B) {
		for b.Loop() {
			if _, err := Load(o); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// forgetTreeDigests is a new process: no digest in memory, the disk cache
// not read yet.
func forgetTreeDigests() {
	hashCache.clear()
	treeDisk.Lock()
	treeDisk.loaded = nil
	treeDisk.Unlock()
}

// Issue 46, item 3: a tree pin's digests are kept on disk, so the next
// process reads no file that did not change; a file rewritten to the same
// size with its modification time put back is read again (its change time
// moved) and the server asks again; a cache file that is not the person's
// alone, or not in the format, is ignored. Not parallel: it empties the
// process's digest cache.
func TestTreeDigestsKeptOnDisk(t *testing.T) {
	home, proj := treeProject(t, 200)
	time.Sleep(safefile.RacyWindow + 200*time.Millisecond) // settled stamps only are kept
	o := Options{Home: home, Cwd: proj}
	load := func() (*Server, int64) {
		t.Helper()
		forgetTreeDigests()
		before := digestReads.Load()
		g, err := Load(o)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := g.Server("custom")
		return s, digestReads.Load() - before
	}
	if s, reads := load(); s.State != Ready || reads != 200 {
		t.Fatalf("first process: %s, %d files read, want ready and 200", s.State, reads)
	}
	if data, err := os.ReadFile(TreeCachePath(home)); err != nil || !strings.HasPrefix(string(data), treeCacheHeader+"\n") {
		t.Fatalf("the cache file: %v %.40q", err, data)
	}
	if fi, err := os.Stat(TreeCachePath(home)); err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("the cache file is readable by others: %v", fi.Mode())
	}
	if s, reads := load(); s.State != Ready || reads != 0 {
		t.Fatalf("next process: %s, %d files read, want ready and none", s.State, reads)
	}

	// same size, modification time put back: only the change time moved
	f := filepath.Join(proj, "app", "src", "d001", "f00150.js")
	fi, _ := os.Stat(f)
	os.WriteFile(f, []byte("// FILE 150\n"), 0o755)
	os.Chtimes(f, fi.ModTime(), fi.ModTime())
	if s, reads := load(); s.State != ApprovalChanged || reads != 1 {
		t.Fatalf("after a same-size rewrite: %s (%s), %d files read, want approval-changed and 1", s.State, s.Reason, reads)
	}

	for name, spoil := range map[string]func(string){
		"not the person's alone": func(p string) { os.Chmod(p, 0o666) },
		"another format":         func(p string) { os.WriteFile(p, []byte("piagent tree digests 2\n"), 0o600) },
		"a broken line": func(p string) {
			data, _ := os.ReadFile(p)
			os.WriteFile(p, append(data, "sha256:00 1 2\n"...), 0o600)
		},
	} {
		load() // a fresh cache file
		spoil(TreeCachePath(home))
		if s, reads := load(); s.State != ApprovalChanged || reads != 200 {
			t.Errorf("%s: %s, %d files read, want every file read again", name, s.State, reads)
		}
		os.Remove(TreeCachePath(home))
	}
}

// A digest taken while the file's stamp is racy is not kept: a second
// write in the same clock tick (file systems with coarse timestamps) leaves
// every time and the size as they were, and once settled that stamp would
// vouch for the first content. This kernel's timestamps are too fine to
// make two such writes here, so the test looks at the cache itself.
// Not parallel: it empties the process's digest cache.
func TestRacyDigestNotKept(t *testing.T) {
	forgetTreeDigests()
	p := filepath.Join(t.TempDir(), "server.js")
	os.WriteFile(p, []byte("// version A\n"), 0o644)
	if got := fileDigest(p); got != digest.Bytes([]byte("// version A\n")) {
		t.Fatalf("digest %s", got)
	}
	if _, kept := hashCache.load(p); kept {
		t.Errorf("a digest taken while the stamp was racy is kept")
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old) // the change time stays racy: still not kept
	fileDigest(p)
	if _, kept := hashCache.load(p); kept {
		t.Errorf("a digest taken while the change time was racy is kept")
	}
}

// Past the bound a package cannot be pinned whole: the server is
// pending-approval whatever the store holds, naming the folder and the
// bound, so part of a package is never approved as if it were all of it
// (issue 38, item 6). Control: the same approval holds under the bound.
func TestTreePinTooLarge(t *testing.T) {
	home, proj := treeProject(t, 30)
	g, err := Load(Options{Home: home, Cwd: proj})
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := g.Server("custom"); s.State != Ready || s.TooLarge() != "" {
		t.Fatalf("control: %s (%s), too large %q", s.State, s.Reason, s.TooLarge())
	}
	old := maxPinnedTree
	maxPinnedTree = 20
	defer func() { maxPinnedTree = old }()
	g, err = Load(Options{Home: home, Cwd: proj})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := g.Server("custom")
	if s.State != PendingApproval || s.TooLarge() != "the project holds more than 20 files" || !strings.Contains(s.Reason, "more than 20 files, too much to pin") {
		t.Fatalf("past the bound: %s (%s), too large %q", s.State, s.Reason, s.TooLarge())
	}
	maxPinnedTree = old

	// A file past the size bound: read, it would be approved on nothing
	// (an unreadable file has no digest); it is refused instead.
	oldSize := maxPinnedFile
	maxPinnedFile = 1 << 20
	defer func() { maxPinnedFile = oldSize }()
	big := filepath.Join(proj, "app", "src", "d000", "big.wasm")
	if err := os.WriteFile(big, make([]byte, 1<<20+1), 0o644); err != nil {
		t.Fatal(err)
	}
	forgetTreeDigests()
	g, err = Load(Options{Home: home, Cwd: proj})
	if err != nil {
		t.Fatal(err)
	}
	s, _ = g.Server("custom")
	if s.State != PendingApproval || s.TooLarge() != "app/src/d000/big.wasm is larger than 1 MiB" {
		t.Fatalf("a file past the size bound: %s (%s), too large %q", s.State, s.Reason, s.TooLarge())
	}
	os.Remove(big)

	// A file piagent cannot read (made write-only): refused too. Root
	// reads it whatever its mode, so only an ordinary user sees this.
	if os.Geteuid() == 0 {
		return
	}
	wo := filepath.Join(proj, "app", "src", "d000", "f00001.js")
	if err := os.Chmod(wo, 0o200); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(wo, 0o644)
	forgetTreeDigests()
	g, err = Load(Options{Home: home, Cwd: proj})
	if err != nil {
		t.Fatal(err)
	}
	s, _ = g.Server("custom")
	if s.State != PendingApproval || s.TooLarge() != "app/src/d000/f00001.js cannot be read" {
		t.Fatalf("a write-only file: %s (%s), too large %q", s.State, s.Reason, s.TooLarge())
	}
}

// BenchmarkGetAfterWriteInTree: the cached gate's answer after the agent
// edits a file inside a whole-tree pin of 10,000 files (since issue 38,
// item 6, the usual case for a project's own server), beside the quiet
// answer.
func BenchmarkGetAfterWriteInTree(b *testing.B) {
	home, proj := treeProject(b, 10000)
	time.Sleep(safefile.RacyWindow)
	o := Options{Home: home, Cwd: proj}
	var c Cache
	if _, err := c.Get(o); err != nil {
		b.Fatal(err)
	}
	b.Run("quiet", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.Get(o); err != nil {
				b.Fatal(err)
			}
		}
	})
	p := filepath.Join(proj, "app", "src", "d050", "f05000.js")
	b.Run("edit", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			b.StopTimer()
			if err := os.WriteFile(p, fmt.Appendf(nil, "// edit %d\n", i), 0o644); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			g, err := c.Get(o)
			if err != nil {
				b.Fatal(err)
			}
			if s, _ := g.Server("custom"); s.State != ApprovalChanged {
				b.Fatalf("after the edit: %s", s.State)
			}
		}
	})
}

// The cache file's reader takes exactly the lines saveTreeCache writes, and
// refuses the whole file for any line it does not: a number past 64 bits, a
// sign, a missing field, a relative path, a mode that is not a regular
// file's, another header.
func TestParseTreeCache(t *testing.T) {
	const d = "sha256:" + "ab"
	good := treeCacheHeader + "\n" +
		d + " 2049 18446744073709551615 12 1700000000000000000 1700000000000000001 420 /p/a b.js\n" +
		d + " 1 2 3 4 5 420 /p/c.js\n"
	m := parseTreeCache([]byte(good))
	if len(m) != 2 {
		t.Fatalf("read %d entries of 2: %v", len(m), m)
	}
	want := safefile.Stamp{Exists: true, Dev: 2049, Ino: math.MaxUint64, Size: 12, Mtime: 1700000000000000000, Ctime: 1700000000000000001, Mode: 0o644}
	if got := m["/p/a b.js"]; got.key != want || got.digest != d {
		t.Errorf("entry %+v, want %+v %s", got, want, d)
	}
	for name, bad := range map[string]string{
		"past 64 bits":  d + " 1 18446744073709551616 3 4 5 420 /p/x.js\n",
		"a sign":        d + " 1 +2 3 4 5 420 /p/x.js\n",
		"a letter":      d + " 1 2x 3 4 5 420 /p/x.js\n",
		"empty number":  d + " 1  3 4 5 420 /p/x.js\n",
		"a field short": d + " 1 2 3 4 5 420\n",
		"relative path": d + " 1 2 3 4 5 420 p/x.js\n",
		"a folder":      d + " 1 2 3 4 5 2147484141 /p/x\n",
		"no digest":     "md5:00 1 2 3 4 5 420 /p/x.js\n",
		"no newline":    d + " 1 2 3 4 5 420 /p/x.js",
	} {
		if m := parseTreeCache([]byte(good + bad)); m != nil {
			t.Errorf("%s: read %d entries, want none", name, len(m))
		}
	}
	if m := parseTreeCache([]byte("piagent tree digests 0\n" + good[len(treeCacheHeader)+1:])); m != nil {
		t.Errorf("another version's header: read %d entries", len(m))
	}
}

// A large pin's digests are taken in parallel: each file gets its own
// digest, in its own place, whatever the order the goroutines take them in
// (a file, a link, a missing path, one too recent to cache).
func TestFileDigestsInParallel(t *testing.T) {
	dir := t.TempDir()
	var ps []string
	for i := range 3*digestRun + 7 {
		p := filepath.Join(dir, fmt.Sprintf("f%04d.js", i))
		switch i % 5 {
		case 0:
			os.Symlink(fmt.Sprintf("target-%d", i), p)
		case 1: // missing
		default:
			os.WriteFile(p, fmt.Appendf(nil, "// %d\n", i), 0o644)
		}
		ps = append(ps, p)
	}
	out := make([]PinnedFile, len(ps))
	fileDigests(ps, out)
	for i, p := range ps {
		want := ""
		switch i % 5 {
		case 0:
			want = linkDigest + digest.Bytes(fmt.Appendf(nil, "target-%d", i))
		case 1:
		default:
			want = digest.Bytes(fmt.Appendf(nil, "// %d\n", i))
		}
		if out[i].Digest != want || fileDigest(p) != want {
			t.Fatalf("%s: digest %q, want %q", p, out[i].Digest, want)
		}
	}
}

// An attack on the parallel digests and the digest cache: a settled,
// approved whole-tree pin of a few runs of digestRun files, taken by
// several goroutines, in which files at the runs' edges are changed in
// every way that keeps a cheap stamp (same size, modification time put
// back; a new file renamed over the old with the old times; two files of
// one size swapped) and left to settle. Whether the digests come from this
// process's memory or from the cache file written before the change, every
// changed file gets its new content's digest, the server asks again, and
// only the changed files are read. Not parallel: it empties the process's
// digest cache and sets GOMAXPROCS.
func TestTreePinChangesSeenThroughCaches(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	n := 3*digestRun + 7
	home, proj := treeProject(t, n)
	file := func(i int) string {
		return filepath.Join(proj, "app", "src", fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%05d.js", i))
	}
	rel := func(i int) string {
		r, _ := filepath.Rel(proj, file(i))
		return filepath.ToSlash(r)
	}
	o := Options{Home: home, Cwd: proj}
	load := func(fresh bool) (*Server, int64) {
		t.Helper()
		if fresh {
			forgetTreeDigests()
		}
		before := digestReads.Load()
		g, err := Load(o)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := g.Server("custom")
		return s, digestReads.Load() - before
	}
	time.Sleep(safefile.RacyWindow + 200*time.Millisecond)
	if s, reads := load(true); s.State != Ready || reads != int64(n) {
		t.Fatalf("settled: %s (%s), %d read", s.State, s.Reason, reads)
	}
	if s, reads := load(false); s.State != Ready || reads != 0 {
		t.Fatalf("again: %s (%s), %d read, want none", s.State, s.Reason, reads)
	}
	saved, err := os.ReadFile(TreeCachePath(home))
	if err != nil {
		t.Fatal(err)
	}

	want := map[string]string{} // changed file → its new digest
	keepTimes := func(p string, fi os.FileInfo) {
		if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	for k, i := range []int{1, digestRun - 1, digestRun, 2*digestRun - 1, 2 * digestRun, 3*digestRun - 1, 3 * digestRun, n - 1} {
		p := file(i)
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		content := fmt.Appendf(nil, "// FILE %d\n", i) // the same size
		switch k % 2 {
		case 0: // rewritten in place
			os.WriteFile(p, content, 0o755)
		case 1: // a new file renamed over it
			os.WriteFile(p+".new", content, 0o755)
			keepTimes(p+".new", fi)
			if err := os.Rename(p+".new", p); err != nil {
				t.Fatal(err)
			}
		}
		keepTimes(p, fi)
		want[rel(i)] = digest.Bytes(content)
	}
	// two files of one size swapped, at the edge of two runs
	a, b := file(digestRun+1), file(2*digestRun+1)
	os.Rename(a, a+".tmp")
	os.Rename(b, a)
	os.Rename(a+".tmp", b)
	want[rel(digestRun+1)] = digest.Bytes(fmt.Appendf(nil, "// file %d\n", 2*digestRun+1))
	want[rel(2*digestRun+1)] = digest.Bytes(fmt.Appendf(nil, "// file %d\n", digestRun+1))
	time.Sleep(safefile.RacyWindow + 200*time.Millisecond)

	check := func(how string, fresh bool) {
		t.Helper()
		s, reads := load(fresh)
		if s.State != ApprovalChanged {
			t.Errorf("%s: %s (%s), want approval-changed", how, s.State, s.Reason)
		}
		seen := 0
		for _, p := range s.Pinned {
			if d, ok := want[p.Path]; ok {
				seen++
				if p.Digest != d {
					t.Errorf("%s: %s has digest %s, its content's is %s", how, p.Path, p.Digest, d)
				}
			}
		}
		if seen != len(want) || reads != int64(len(want)) {
			t.Errorf("%s: %d changed files pinned, %d files read, want %d and %d", how, seen, reads, len(want), len(want))
		}
	}
	check("this process, its memory from before", false)
	if err := os.WriteFile(TreeCachePath(home), saved, 0o600); err != nil {
		t.Fatal(err)
	}
	check("the next process, the cache file from before", true)
}

// An attack on the parallel digests' memory: a package of a few runs of
// files, several of them large (up to maxPinnedFile each, 256 MiB), is
// digested by up to eight goroutines at once; read whole, their contents
// are in memory side by side (eight times what one read held before the
// digests were taken in parallel), enough to have the helper killed on a
// small machine. Each is streamed instead: digesting them all allocates
// less than one of them. Not parallel: it sets GOMAXPROCS and measures the
// process's allocations.
func TestFileDigestsStreamed(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	dir := t.TempDir()
	const big = 32 << 20
	var ps []string
	for i := range 2*digestRun + 1 {
		p := filepath.Join(dir, fmt.Sprintf("f%04d.js", i))
		if err := os.WriteFile(p, fmt.Appendf(nil, "// %d\n", i), 0o644); err != nil {
			t.Fatal(err)
		}
		if i%64 == 0 {
			if err := os.Truncate(p, big); err != nil { // sparse: no disk
				t.Fatal(err)
			}
		}
		ps = append(ps, p)
	}
	out := make([]PinnedFile, len(ps))
	forgetTreeDigests()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fileDigests(ps, out)
	runtime.ReadMemStats(&after)
	bigWant := func(i int) string {
		data := make([]byte, big)
		copy(data, fmt.Appendf(nil, "// %d\n", i))
		return digest.Bytes(data)
	}
	for i := range ps {
		want := digest.Bytes(fmt.Appendf(nil, "// %d\n", i))
		if i%64 == 0 {
			want = bigWant(i)
		}
		if out[i].Digest != want {
			t.Fatalf("%s: digest %s, want %s", ps[i], out[i].Digest, want)
		}
	}
	t.Logf("%d files digested, %d KiB allocated", len(ps), (after.TotalAlloc-before.TotalAlloc)>>10)
	if n := after.TotalAlloc - before.TotalAlloc; n >= big {
		t.Errorf("digesting %d files, %d of %d MiB, allocated %d MiB", len(ps), (len(ps)+63)/64, big>>20, n>>20)
	}
}

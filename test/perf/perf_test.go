// Package perf measures piagent as a person's machine runs it: whole
// processes (`piagent-mcp list --json`, `piagent sandbox exec`) and the
// guard helper driven over real pipes from this process, each beside a
// baseline measured in the same run (a hello-world Go binary's start, an
// echo helper with the same framing, /bin/true). The figures are
// benchmarks:
//
//	go test -run '^$' -bench . -benchtime 20x ./test/perf
//
// reporting ms/op, peak-MiB, p50-µs, p99-µs and rss-MiB.
package perf

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// TestMain removes the binaries bins built, once every benchmark is done.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// bins builds piagent, piagent-mcp and the two baselines once, into a
// temporary folder TestMain removes.
func bins(b testing.TB) string {
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "piagent-perf-")
		if buildErr != nil {
			return
		}
		root, _ := filepath.Abs("../..")
		for _, p := range []string{"piagent", "piagent-mcp", "piagent-sandbox", "piagent-netproxy"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, p), "./cmd/"+p)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", p, err, out)
				return
			}
		}
		for name, src := range map[string]string{
			"floor":     floorSource,
			"lstatwalk": lstatWalkSource,
			"hello":     "package main\n\nimport \"os\"\n\nfunc main() { os.Stdout.WriteString(\"hello\\n\") }\n",
			// echo answers each request line with a fixed decision, with
			// the helper's framing: the floor of a pipe round trip.
			"echo": "package main\n\nimport (\"bufio\"; \"os\")\n\nfunc main() {\n\tr := bufio.NewReaderSize(os.Stdin, 1<<16)\n\tos.Stdout.WriteString(\"{\\\"protocol\\\":\\\"piagent-guard\\\"}\\n\")\n\tfor {\n\t\tif _, err := r.ReadBytes('\\n'); err != nil {\n\t\t\treturn\n\t\t}\n\t\tos.Stdout.WriteString(\"{\\\"id\\\":1,\\\"result\\\":{\\\"action\\\":\\\"allow\\\",\\\"code\\\":\\\"ok\\\"}}\\n\")\n\t}\n}\n",
		} {
			dir := filepath.Join(binDir, name+"-src")
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644)
			os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+name+"\n\ngo 1.22\n"), 0o644)
			cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, name), ".")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", name, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		b.Fatal(buildErr)
	}
	return binDir
}

// fixture spreads n servers over every file layer and two import kinds
// (cursor JSON, codex TOML), as the issue measured.
func fixture(b testing.TB, n int) (home, proj string) {
	root := b.TempDir()
	home, proj = filepath.Join(root, "home"), filepath.Join(root, "proj")
	files := []string{
		filepath.Join(home, ".config", "mcp", "mcp.json"),
		filepath.Join(home, ".agents", "mcp.json"),
		filepath.Join(home, ".pi", "agent", "mcp.json"),
		filepath.Join(proj, ".mcp.json"),
		filepath.Join(proj, ".pi", "mcp.json"),
		filepath.Join(home, ".cursor", "mcp.json"),
	}
	bodies := make([]strings.Builder, len(files))
	var toml strings.Builder
	for i := 0; i < n; i++ {
		slot := i % (len(files) + 1)
		if slot == len(files) {
			fmt.Fprintf(&toml, "[mcp_servers.codex-%d]\ncommand = \"node\"\nargs = [\"s%d.js\"]\n", i, i)
			continue
		}
		w := &bodies[slot]
		if w.Len() > 0 {
			w.WriteString(",\n")
		}
		fmt.Fprintf(w, `"srv-%d": {"command": "node", "args": ["server-%d.js", "--port", "%d"], "env": {"TOKEN": "${TOKEN_%d}", "MODE": "fast"}}`, i, i, i, i)
	}
	for i, f := range files {
		os.MkdirAll(filepath.Dir(f), 0o755)
		body := "{\n  // generated\n  \"mcpServers\": {\n" + bodies[i].String() + "\n  }"
		if f == filepath.Join(proj, ".mcp.json") {
			body += `, "imports": ["cursor", "codex"]`
		}
		os.WriteFile(f, []byte(body+"\n}\n"), 0o644)
	}
	os.MkdirAll(filepath.Join(home, ".codex"), 0o755)
	os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(toml.String()), 0o644)
	os.MkdirAll(filepath.Join(proj, "src"), 0o755)
	os.WriteFile(filepath.Join(proj, "src", "a.go"), []byte("package a\n"), 0o644)
	os.WriteFile(filepath.Join(proj, ".env"), []byte("TOKEN=x\n"), 0o600)
	return home, proj
}

func env(home string) []string {
	return []string{"HOME=" + home, "PATH=/usr/bin:/bin", "LANG=C"}
}

// runProcess runs argv b.N times and reports its median wall time, its
// median CPU time (user and system) and the largest peak RSS.
func runProcess(b *testing.B, dir string, environ []string, argv ...string) {
	var times, cpus []time.Duration
	var peak int64
	// the output goes to /dev/null, as hyperfine's does: the figure is the
	// command's own, not a reader's
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	for b.Loop() {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env, cmd.Stdout = dir, environ, null
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%v: %v", argv, err)
		}
		times = append(times, time.Since(start))
		cpus = append(cpus, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = max(peak, ru.Maxrss)
		}
	}
	slices.Sort(times)
	slices.Sort(cpus)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms/op")
	b.ReportMetric(float64(cpus[len(cpus)/2].Microseconds())/1000, "cpu-ms")
	b.ReportMetric(float64(peak)/1024, "peak-MiB")
}

// BenchmarkListJSON is `piagent-mcp list --json` as a whole process, with
// a hello-world Go binary's start as the floor of a process, and beside
// each size the encoding/json floor (floor-N): a program that only reads
// the same files with encoding/json into map[string]any and writes a JSON
// list of the same servers. PIAGENT_MCP, when set, is the piagent-mcp
// binary measured (an older build, for a before/after in one run);
// LIST_SIZES, when set, the sizes (comma-separated).
func BenchmarkListJSON(b *testing.B) {
	dir := bins(b)
	mcp := filepath.Join(dir, "piagent-mcp")
	if p := os.Getenv("PIAGENT_MCP"); p != "" {
		mcp = p
	}
	sizes := []int{1, 100, 1000, 10000, 100000}
	if s := os.Getenv("LIST_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				b.Fatalf("LIST_SIZES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	b.Run("hello", func(b *testing.B) {
		runProcess(b, os.TempDir(), env(os.TempDir()), filepath.Join(dir, "hello"))
	})
	for _, n := range sizes {
		home, proj := fixture(b, n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			runProcess(b, proj, env(home), mcp, "list", "--json")
		})
		b.Run("floor-"+strconv.Itoa(n), func(b *testing.B) {
			runProcess(b, proj, env(home), filepath.Join(dir, "floor"))
		})
	}
}

// BenchmarkListTreePin is issue 46's repeat `list --json` in a project
// whose one server runs from a 10,000-file package, so its approval pins
// every file: each round runs the floor (a walk of the package with an
// lstat of every entry, which any check that the files did not change must
// make) and then list, interleaved so that both meet the same load, and
// reports both medians and their ratio. The tree and its approval are
// written first, and a racy window passes, as the next session finds them.
func BenchmarkListTreePin(b *testing.B) {
	dir := bins(b)
	mcp := filepath.Join(dir, "piagent-mcp")
	if p := os.Getenv("PIAGENT_MCP"); p != "" {
		mcp = p
	}
	home, proj := fixture(b, 1)
	treeServer(b, dir, home, proj, 10000, filepath.Join(proj, "srv", "d050", "f05000.js"))
	time.Sleep(3 * time.Second) // past the racy window of a stamp
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	run := func(argv ...string) time.Duration {
		cmd := exec.Command(argv[0], argv[1:]...)
		var stderr strings.Builder
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = proj, env(home), null, &stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%v: %v\n%s", argv, err, stderr.String())
		}
		return time.Since(start)
	}
	// the first list writes the digests the next ones read
	run(mcp, "list", "--json")
	var floor, list []time.Duration
	for b.Loop() {
		floor = append(floor, run(filepath.Join(dir, "lstatwalk"), filepath.Join(proj, "srv")))
		list = append(list, run(mcp, "list", "--json"))
	}
	slices.Sort(floor)
	slices.Sort(list)
	f, l := floor[len(floor)/2], list[len(list)/2]
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(f.Microseconds())/1000, "floor-ms")
	b.ReportMetric(float64(l.Microseconds())/1000, "list-ms")
	b.ReportMetric(float64(l)/float64(f), "list/floor")
}

// lstatWalkSource is the floor of a repeat tree pin: a walk of the folder
// it is given, with an lstat of every entry, in one Go process.
const lstatWalkSource = `package main

import (
	"io/fs"
	"os"
	"path/filepath"
)

func main() {
	n := 0
	filepath.WalkDir(os.Args[1], func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			if _, err := os.Lstat(p); err == nil {
				n++
			}
		}
		return nil
	})
	if n == 0 {
		os.Exit(1)
	}
}
`

// floorSource is the encoding/json floor of `list --json`: it reads the
// fixture's six JSON files (their comment lines dropped, as the fixture
// writes them) and its codex TOML (three line forms), decodes each JSON
// file with encoding/json into map[string]any, and writes the servers,
// sorted by name, as one JSON list of name, scope, transport, target and
// source, with encoding/json. It does nothing a reader of the same files
// could skip: no layers' rules, no gate, no digests.
const floorSource = `package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type row struct {
	Name      string            ` + "`json:\"name\"`" + `
	Scope     string            ` + "`json:\"scope\"`" + `
	Transport string            ` + "`json:\"transport\"`" + `
	Target    string            ` + "`json:\"target\"`" + `
	Source    map[string]string ` + "`json:\"source\"`" + `
}

func main() {
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	files := []struct{ path, scope string }{
		{filepath.Join(home, ".config", "mcp", "mcp.json"), "global"},
		{filepath.Join(home, ".agents", "mcp.json"), "global"},
		{filepath.Join(home, ".pi", "agent", "mcp.json"), "pi-global"},
		{filepath.Join(cwd, ".mcp.json"), "project"},
		{filepath.Join(cwd, ".pi", "mcp.json"), "pi-project"},
		{filepath.Join(home, ".cursor", "mcp.json"), "global"},
	}
	var rows []row
	for _, f := range files {
		data, err := os.ReadFile(f.path)
		if err != nil {
			continue
		}
		var out []byte
		for _, l := range bytes.SplitAfter(data, []byte("\n")) {
			if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("//")) {
				out = append(out, l...)
			}
		}
		var doc map[string]any
		if err := json.Unmarshal(out, &doc); err != nil {
			os.Exit(2)
		}
		servers, _ := doc["mcpServers"].(map[string]any)
		for name, v := range servers {
			e, _ := v.(map[string]any)
			rows = append(rows, entryRow(name, f.scope, f.path, e))
		}
	}
	toml := filepath.Join(home, ".codex", "config.toml")
	if data, err := os.ReadFile(toml); err == nil {
		var name string
		var e map[string]any
		flush := func() {
			if e != nil {
				rows = append(rows, entryRow(name, "global", toml, e))
			}
		}
		for _, l := range strings.Split(string(data), "\n") {
			switch {
			case strings.HasPrefix(l, "[mcp_servers."):
				flush()
				name, e = strings.TrimSuffix(strings.TrimPrefix(l, "[mcp_servers."), "]"), map[string]any{}
			case strings.HasPrefix(l, "command = "):
				var s string
				json.Unmarshal([]byte(strings.TrimPrefix(l, "command = ")), &s)
				e["command"] = s
			case strings.HasPrefix(l, "args = "):
				var a []any
				json.Unmarshal([]byte(strings.TrimPrefix(l, "args = ")), &a)
				e["args"] = a
			}
		}
		flush()
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(map[string]any{"project": cwd, "servers": rows})
	w.Flush()
}

func entryRow(name, scope, file string, e map[string]any) row {
	r := row{Name: name, Scope: scope, Transport: "invalid", Target: "-", Source: map[string]string{"file": file}}
	if c, ok := e["command"].(string); ok {
		r.Transport, r.Target = "stdio", c
		if args, ok := e["args"].([]any); ok {
			for _, a := range args {
				if s, ok := a.(string); ok {
					r.Target += " " + s
				}
			}
		}
	} else if u, ok := e["url"].(string); ok {
		r.Transport, r.Target = "http", u
	}
	return r
}
`

// helper is a guard helper process driven over its pipes.
// helper drives a helper process over two pipes with raw system calls:
// a blocking read that the Go runtime does not see, so this process never
// hands its processor off while it waits (which it does in a wait longer
// than 20 µs, adding 10–30 µs to every slower answer's figure; a Python
// driver shows the same helper without that cost). The helper's side is
// as Pi's extension finds it: its ends of two ordinary pipes.
type helper struct {
	cmd     *exec.Cmd
	in, out *os.File // this process's ends: the helper's stdin, its stdout
	inFD    uintptr  // their descriptors, in blocking mode (File.Fd)
	outFD   uintptr
	buf     []byte
	n       int // bytes of buf read but not yet returned
}

func startHelper(b *testing.B, argv []string, dir string, environ []string) *helper {
	stdin, in, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	out, stdout, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdin, cmd.Stdout = dir, environ, stdin, stdout
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	stdin.Close()
	stdout.Close()
	h := &helper{cmd: cmd, in: in, out: out, inFD: in.Fd(), outFD: out.Fd(), buf: make([]byte, 1<<16)}
	b.Cleanup(func() { in.Close(); cmd.Wait(); out.Close() })
	h.line(b) // the handshake
	return h
}

func (h *helper) ask(b *testing.B, req string) string {
	for p := []byte(req); len(p) > 0; {
		n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, h.inFD, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if errno != 0 {
			b.Fatal(errno)
		}
		p = p[n:]
	}
	return h.line(b)
}

// line reads up to and through the next line break.
func (h *helper) line(b *testing.B) string {
	for {
		if i := bytes.IndexByte(h.buf[:h.n], '\n'); i >= 0 {
			line := string(h.buf[:i+1])
			h.n = copy(h.buf, h.buf[i+1:h.n])
			return line
		}
		if h.n == len(h.buf) {
			b.Fatal("an answer longer than 64 KiB")
		}
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, h.outFD, uintptr(unsafe.Pointer(&h.buf[h.n])), uintptr(len(h.buf)-h.n))
		if errno != 0 || n == 0 {
			b.Fatalf("reading the helper's answer: %v (%d bytes)", errno, n)
		}
		h.n += int(n)
	}
}

func rssMiB(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}

// BenchmarkHelper drives `piagent guard serve` over real pipes with
// decide requests of each kind and reports the latency percentiles of
// b.N requests and the helper's RSS after them; "echo" is a helper that
// only frames, the floor. PIAGENT, when set, is the piagent binary
// measured (an older build, for a before/after in one run).
func BenchmarkHelper(b *testing.B) {
	dir := bins(b)
	piagent := filepath.Join(dir, "piagent")
	if p := os.Getenv("PIAGENT"); p != "" {
		piagent = p // another build, for a before/after in one run
	}
	home, proj := fixture(b, 10)
	exec.Command("git", "-C", proj, "init", "-q").Run()
	calls := map[string]string{
		"read":            `{"toolName":"read","input":{"path":"src/a.go"}}`,
		"bash":            `{"toolName":"bash","input":{"command":"cd src && go test ./... 2>&1 | grep -v '^ok' | head -n 50"}}`,
		"bash-git":        `{"toolName":"bash","input":{"command":"git status --short && git diff --stat"}}`,
		"mcp-proxy":       `{"toolName":"mcp","input":{"tool":"echo","server":"srv-0"}}`,
		"protected-write": `{"toolName":"write","input":{"path":".env","content":"x"}}`,
	}
	kinds := []string{"read", "bash", "bash-git", "mcp-proxy", "protected-write"}
	b.Run("echo", func(b *testing.B) {
		h := startHelper(b, []string{filepath.Join(dir, "echo")}, proj, env(home))
		measure(b, h, `{"id":1,"method":"decide","params":`+calls["read"]+"}\n")
	})
	for _, k := range kinds {
		b.Run(k, func(b *testing.B) {
			h := startHelper(b, []string{piagent, "guard", "serve"}, proj, env(home))
			measure(b, h, `{"id":1,"method":"decide","params":`+calls[k]+"}\n")
		})
	}
	// At an agent's pace: a millisecond's pause before each call, so the
	// call finds the helper long asleep (on this machine, an idle virtual
	// processor to wake), against echo paced alike.
	paced := func(req string) func(int) string {
		return func(int) string {
			time.Sleep(time.Millisecond)
			return req
		}
	}
	b.Run("echo-paced", func(b *testing.B) {
		h := startHelper(b, []string{filepath.Join(dir, "echo")}, proj, env(home))
		measureEach(b, h, paced(`{"id":1,"method":"decide","params":`+calls["read"]+"}\n"))
	})
	b.Run("bash-paced", func(b *testing.B) {
		h := startHelper(b, []string{piagent, "guard", "serve"}, proj, env(home))
		measureEach(b, h, paced(`{"id":1,"method":"decide","params":`+calls["bash"]+"}\n"))
	})
	// bash commands as an agent sends them: each one new
	b.Run("bash-new", func(b *testing.B) {
		h := startHelper(b, []string{piagent, "guard", "serve"}, proj, env(home))
		measureEach(b, h, func(i int) string {
			return `{"id":1,"method":"decide","params":{"toolName":"bash","input":{"command":"cd src && go test ./... 2>&1 | grep -v '^ok' | head -n ` + strconv.Itoa(i) + `"}}}` + "\n"
		})
	})
	// new lines at a model's pace, a little shortened: 5 ms between calls,
	// past the helper's pause before it collects (gcpolicy.Pause)
	b.Run("bash-new-paced", func(b *testing.B) {
		h := startHelper(b, []string{piagent, "guard", "serve"}, proj, env(home))
		measureEach(b, h, func(i int) string {
			time.Sleep(5 * time.Millisecond)
			return `{"id":1,"method":"decide","params":{"toolName":"bash","input":{"command":"cd src && go test ./... 2>&1 | grep -v '^ok' | head -n ` + strconv.Itoa(i) + `"}}}` + "\n"
		})
	})
}

func measure(b *testing.B, h *helper, req string) {
	measureEach(b, h, func(int) string { return req })
}

func measureEach(b *testing.B, h *helper, req func(i int) string) {
	h.ask(b, req(0)) // the first answer computes the gate
	var lat []time.Duration
	i := 0
	cpu0 := cpuTime(h.cmd.Process.Pid)
	for b.Loop() {
		i++
		r := req(i)
		start := time.Now()
		h.ask(b, r)
		lat = append(lat, time.Since(start))
	}
	cpu := cpuTime(h.cmd.Process.Pid) - cpu0
	slices.Sort(lat)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1000, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1000, "p99-µs")
	b.ReportMetric(rssMiB(h.cmd.Process.Pid), "rss-MiB")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(len(lat))/1000, "cpu-µs/op")
	}
}

// BenchmarkToolCall is a whole bash tool call as the agent meets it
// (issue 45): the helper's decision for `bash -c 'echo hi'`, then the
// command as the extension spawns it (piagent-sandbox exec --auto
// --project P -- /bin/bash -c 'echo hi'), against plain `bash -c 'echo
// hi'`. Each reports its median and p99 wall time; run them in one
// invocation (-bench ToolCall) so that they share the machine's load.
func BenchmarkToolCall(b *testing.B) {
	dir := bins(b)
	home, proj := fixture(b, 10)
	exec.Command("git", "-C", proj, "init", "-q").Run()
	argv := []string{"/bin/bash", "-c", "echo hi"}
	run := func(b *testing.B, argv []string) {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = proj, env(home)
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != "hi\n" {
			b.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
	timed := func(b *testing.B, call func()) {
		var lat []time.Duration
		for b.Loop() {
			start := time.Now()
			call()
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
	b.Run("plain", func(b *testing.B) {
		timed(b, func() { run(b, argv) })
	})
	b.Run("sandboxed", func(b *testing.B) {
		h := startHelper(b, []string{filepath.Join(dir, "piagent"), "guard", "serve"}, proj, env(home))
		req := `{"id":1,"method":"decide","params":{"toolName":"bash","input":{"command":"echo hi"}}}` + "\n"
		h.ask(b, req)
		sandboxed := append([]string{filepath.Join(dir, "piagent-sandbox"), "exec", "--auto", "--project", proj, "--"}, argv...)
		timed(b, func() {
			if got := h.ask(b, req); !strings.Contains(got, `"action":"allow"`) {
				b.Fatalf("decision: %s", got)
			}
			run(b, sandboxed)
		})
	})
}

// cpuTime is the processor time (user and system) a process has used so
// far, from /proc; 0 where there is none.
func cpuTime(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// the fields after the command's name, which is in parentheses
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// clockTicks is USER_HZ, the unit of /proc's times: 100 on every Linux
// piagent runs on.
const clockTicks = 100

// BenchmarkHelperAfterWrite is issue 46's decision after a write, through
// the helper over real pipes: a `read` decided quietly, and decided after
// a file was rewritten (untimed) just before the request, for the three
// cases the issue names: 10 servers and a write in the project root; a
// server run from the working tree and a write of its code; a server
// whose package is a 10,000-file tree and a write of one of its files.
// The write changes the content, so the pinned server's state changes
// with it; it alternates between two contents so the approval holds
// every other time. after-write-pause leaves 2 ms between the write and
// the request, as the model's turn does (what the helper could do in the
// meantime), against quiet-pause, the same pause with no write; quiet-gap
// is after-write's baseline back to back, the same write where the helper
// watches nothing.
func BenchmarkHelperAfterWrite(b *testing.B) {
	dir := bins(b)
	read := `{"id":1,"method":"decide","params":{"toolName":"read","input":{"path":"src/a.go"}}}` + "\n"
	cases := []struct {
		name  string
		files int    // files of the server's package; 0: no working-tree server
		write string // the file rewritten before each request
	}{
		{"root", 0, "README.md"},
		{"worktree", 3, "srv/f00001.js"},
		{"tree10000", 10000, "srv/d050/f05000.js"},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			home, proj := fixture(b, 10)
			exec.Command("git", "-C", proj, "init", "-q").Run()
			p := filepath.Join(proj, tc.write)
			if tc.files > 0 {
				treeServer(b, dir, home, proj, tc.files, p)
			} else {
				os.WriteFile(p, []byte("// 0\n"), 0o644)
			}
			// quiet-gap's file, beside the project in a folder no watch holds
			aside := filepath.Join(filepath.Dir(proj), "aside", "aside.js")
			os.MkdirAll(filepath.Dir(aside), 0o755)
			time.Sleep(3 * time.Second) // past the racy window of a stamp
			piagent := filepath.Join(dir, "piagent")
			if p := os.Getenv("PIAGENT"); p != "" {
				piagent = p // another build, as BenchmarkHelper takes it
			}
			h := startHelper(b, []string{piagent, "guard", "serve"}, proj, env(home))
			b.Run("quiet", func(b *testing.B) {
				measure(b, h, read)
			})
			// after-write-pause's baseline: the same pause, no write (the
			// helper is woken from its sleep)
			b.Run("quiet-pause", func(b *testing.B) {
				measureEach(b, h, func(int) string {
					time.Sleep(2 * time.Millisecond)
					return read
				})
			})
			// after-write's baseline back to back (aside, above): the same write made
			// where the helper watches nothing, so the request meets the
			// same gap and the same waking, and nothing to notice. It is
			// on the project's own file system: a rewrite there costs the
			// machine more than one in memory (ext4 writes a truncated
			// file's blocks out at its close, and the disk's interrupts
			// fall on the helper too), none of it the helper's doing
			b.Run("quiet-gap", func(b *testing.B) {
				measureEach(b, h, func(i int) string {
					if err := os.WriteFile(aside, fmt.Appendf(nil, "// %d\n", i%2), 0o644); err != nil {
						b.Fatal(err)
					}
					return read
				})
			})
			b.Run("after-write", func(b *testing.B) {
				measureEach(b, h, func(i int) string {
					if err := os.WriteFile(p, fmt.Appendf(nil, "// %d\n", i%2), 0o644); err != nil {
						b.Fatal(err)
					}
					return read
				})
			})
			// as an agent's session has it: the model thinks between the
			// edit and the next call
			b.Run("after-write-pause", func(b *testing.B) {
				measureEach(b, h, func(i int) string {
					if err := os.WriteFile(p, fmt.Appendf(nil, "// %d\n", i%2), 0o644); err != nil {
						b.Fatal(err)
					}
					time.Sleep(2 * time.Millisecond)
					return read
				})
			})
			if tc.files == 0 {
				return
			}
			// what was measured was the real answer: the server's state
			// follows its file
			call := `{"id":1,"method":"decide","params":{"toolName":"mcp","input":{"tool":"echo","server":"tree"}}}` + "\n"
			for i, want := range []string{`"action":"block"`, `"action":"allow"`} {
				os.WriteFile(p, fmt.Appendf(nil, "// %d\n", 1-i), 0o644)
				if got := h.ask(b, call); !strings.Contains(got, want) {
					b.Fatalf("after writing // %d: %s, want %s", 1-i, got, want)
				}
			}
		})
	}
}

// treeServer adds to proj a repository server run from srv/, a package
// of n files, writes "// 0" to the file edit, and approves the server
// with piagent-mcp.
func treeServer(b *testing.B, bin, home, proj string, n int, edit string) {
	srv := filepath.Join(proj, "srv")
	for i := 0; i < n; i++ {
		p := filepath.Join(srv, fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%05d.js", i))
		if n < 100 || i == 0 {
			p = filepath.Join(srv, fmt.Sprintf("f%05d.js", i))
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, fmt.Appendf(nil, "// file %d\n", i), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(srv, "package.json"), []byte(`{"name": "srv", "bin": "f00000.js"}`+"\n"), 0o644)
	os.WriteFile(edit, []byte("// 0\n"), 0o644)
	os.WriteFile(filepath.Join(proj, ".pi", "mcp.json"), []byte(`{"mcpServers": {"tree": {"command": "node", "args": ["srv/f00000.js"]}}}`+"\n"), 0o644)
	cmd := exec.Command(filepath.Join(bin, "piagent-mcp"), "approve", "tree", "--yes")
	cmd.Dir, cmd.Env = proj, env(home)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("approve: %v\n%s", err, out)
	}
}

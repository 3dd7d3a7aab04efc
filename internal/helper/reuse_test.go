package helper

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReusedStateAnswersAsFresh: what the helper keeps from one request to
// the next (the line read in place in its reader's buffer, the command
// reader's parsers and its memory of the last lines) never carries one
// call's data into the next. Lines of the same length with different
// answers, sent in turn through one helper, are answered as a helper that
// sees each alone answers them.
func TestReusedStateAnswersAsFresh(t *testing.T) {
	home, cwd := project(t)
	os.MkdirAll(filepath.Join(cwd, "src"), 0o755)
	os.WriteFile(filepath.Join(cwd, "src", "a.go"), []byte("package a\n"), 0o644)
	os.WriteFile(filepath.Join(cwd, ".env"), []byte("TOKEN=x\n"), 0o600)
	bash := func(cmd string) string {
		return fmt.Sprintf(`{"toolName":"bash","input":{"command":%q}}`, cmd)
	}
	// each pair: the same length, a different answer
	params := []string{
		bash("cat src/a.go"), bash("cat ./.env  "),
		bash("ls -la src  "), bash("rm -rf ~/   "),
		`{"toolName":"read","input":{"path":"src/a.go"}}`, `{"toolName":"read","input":{"path":".env/../.env"}}`,
		bash("git status && git push --force"), bash("git status && echo 'push --force'"),
	}
	fresh := make([]string, len(params))
	for i, p := range params {
		fresh[i] = answer(start(t, home, cwd), p)
	}
	for i := 0; i < len(params); i += 2 {
		if fresh[i] == fresh[i+1] {
			t.Fatalf("%s and %s: the same answer %s; the test needs two", params[i], params[i+1], fresh[i])
		}
	}
	c := start(t, home, cwd)
	for round := range 3 {
		for i, p := range params {
			if got := answer(c, p); got != fresh[i] {
				t.Fatalf("round %d, %s after %d other lines: %s, alone %s", round, p, round*len(params)+i, got, fresh[i])
			}
		}
	}
}

// answer is the helper's whole answer line to a decide request.
func answer(c *client, params string) string {
	c.t.Helper()
	line := `{"id":1,"method":"decide","params":` + params + "}\n"
	if _, err := c.in.Write([]byte(line)); err != nil {
		c.t.Fatal(err)
	}
	resp, err := c.out.ReadString('\n')
	if err != nil {
		c.t.Fatal(err)
	}
	if !strings.Contains(resp, `"action"`) {
		c.t.Fatalf("%s: %s", params, resp)
	}
	return resp
}

// TestPipelinedLinesAnsweredAlone: the extension may write the next
// request before it has read the last answer (Pi runs a turn's tool calls
// side by side), so the reader's buffer holds several lines at once and
// slides them to its start as it refills. Lines read in place there, one
// past the buffer's size read through a copy, and same-length lines with
// different answers, all written in one go, are each answered as a helper
// that sees them alone answers them.
func TestPipelinedLinesAnsweredAlone(t *testing.T) {
	home, cwd := project(t)
	os.MkdirAll(filepath.Join(cwd, "src"), 0o755)
	os.WriteFile(filepath.Join(cwd, "src", "a.go"), []byte("package a\n"), 0o644)
	os.WriteFile(filepath.Join(cwd, ".env"), []byte("TOKEN=x\n"), 0o600)
	bash := func(cmd string) string {
		return fmt.Sprintf(`{"toolName":"bash","input":{"command":%q}}`, cmd)
	}
	// a line longer than the reader's 64 KiB buffer: read through a copy
	long := bash("cat ./.env # " + strings.Repeat("x", 70<<10))
	// one just under it: read in place, filling the buffer
	fill := bash("cat src/a.go # " + strings.Repeat("y", 64<<10-80))
	params := []string{
		bash("cat src/a.go"), bash("cat ./.env  "),
		bash("ls -la src  "), bash("rm -rf ~/   "),
		`{"toolName":"read","input":{"path":"src/a.go"}}`, `{"toolName":"read","input":{"path":".env/../.env"}}`,
		bash("git status && git push --force"), bash("git status && echo 'push --force'"),
		long, bash("cat src/a.go"), fill, bash("cat ./.env  "),
		`{"toolName":"write","input":{"path":"src/b.go","content":"package a\n"}}`,
		`{"toolName":"write","input":{"path":".pi/mcp.json","content":"{}\n"}}`,
	}
	fresh := make([]string, len(params))
	for i, p := range params {
		fresh[i] = answer(start(t, home, cwd), p)
	}
	if fresh[0] == fresh[1] || fresh[8] == fresh[9] || fresh[10] == fresh[11] || fresh[12] == fresh[13] {
		t.Fatal("the test needs pairs with different answers")
	}
	c := start(t, home, cwd)
	const rounds = 4
	var all strings.Builder
	for round := range rounds {
		for i, p := range params {
			fmt.Fprintf(&all, `{"id":%d,"method":"decide","params":%s}`+"\n", 1+round*len(params)+i, p)
		}
	}
	werr := make(chan error, 1)
	go func() { _, err := io.WriteString(c.in, all.String()); werr <- err }()
	for round := range rounds {
		for i, p := range params {
			id := 1 + round*len(params) + i
			got, err := c.out.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Replace(fresh[i], `{"id":1,`, fmt.Sprintf(`{"id":%d,`, id), 1)
			if got != want {
				t.Fatalf("round %d, line %d (%.60s…), written with %d others: %s, alone %s", round, i, p, rounds*len(params)-1, got, want)
			}
		}
	}
	if err := <-werr; err != nil {
		t.Fatal(err)
	}

	// Lines of 128 bytes, 512 to the buffer: each refill puts the next
	// 512 where the last ones were, so a string kept from a line of one
	// batch would read, in the next, the line at its place. The last line
	// of batch 1 reads src/a.go through bash; of batch 2, .env; between
	// them only read calls, which leave the command reader's memory alone.
	const size, per = 128, 64 << 10 / 128
	aligned := func(id int, params string) string {
		line := fmt.Sprintf(`{"id":%d,"method":"decide","params":%s`, id, params)
		if len(line) > size-2 {
			t.Fatalf("line too long: %s", line)
		}
		return line + strings.Repeat(" ", size-2-len(line)) + "}\n"
	}
	filler := `{"toolName":"read","input":{"path":"src/a.go"}}`
	plan := make([]int, 2*per) // index in params
	for i := range plan {
		plan[i] = 4 // the filler, params[4]
	}
	plan[per-1], plan[2*per-1] = 0, 1 // cat src/a.go, then cat ./.env
	var stream strings.Builder
	for i, k := range plan {
		stream.WriteString(aligned(1000+i, params[k]))
	}
	if stream.Len() != 2*per*size || params[4] != filler {
		t.Fatalf("the stream is %d bytes, want %d", stream.Len(), 2*per*size)
	}
	c = start(t, home, cwd)
	go func() { _, err := io.WriteString(c.in, stream.String()); werr <- err }()
	for i, k := range plan {
		got, err := c.out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.Replace(fresh[k], `{"id":1,`, fmt.Sprintf(`{"id":%d,`, 1000+i), 1); got != want {
			t.Fatalf("line %d of a stream of 128-byte lines (%s): %s, alone %s", i, params[k], got, want)
		}
	}
	if err := <-werr; err != nil {
		t.Fatal(err)
	}
}

// TestReadLineEndsAtItsLine: a line read in place reaches no further than
// its own end. The reader's buffer already holds the requests written
// after it; an append to the line, or to the params cut from it, must copy,
// never write the next request over (one call's data in the next).
func TestReadLineEndsAtItsLine(t *testing.T) {
	first := `{"id":1,"method":"decide","params":{"toolName":"read","input":{"path":"src/a.go"}}}`
	second := `{"id":2,"method":"decide","params":{"toolName":"read","input":{"path":".env"}}}`
	r := bufio.NewReaderSize(strings.NewReader(first+"\n"+second+"\n"+second+"\n"), 64<<10)
	line, err := readLine(r)
	if err != nil || string(line) != first {
		t.Fatalf("first line %q %v", line, err)
	}
	req, ok := splitRequest(line)
	if !ok {
		t.Fatalf("%s: not split", line)
	}
	_ = append(line, `{"id":2,"method":"decide","params":{"toolName":"read","input":{"path":"src/b.go"}}}`...)
	if next, err := readLine(r); err != nil || string(next) != second {
		t.Fatalf("after an append to the line before: %q %v, written %q", next, err, second)
	}
	_ = append(req.Params, `}}`+"\n"+`{"id":3,"method":"ping","params":{}}`...)
	if next, err := readLine(r); err != nil || string(next) != second {
		t.Fatalf("after an append to the params before: %q %v, written %q", next, err, second)
	}
}

package helper

import (
	"fmt"
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

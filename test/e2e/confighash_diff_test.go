package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/piagent/piagent/internal/mcpcache"
)

// TestDifferentialConfigHash (issue 39, item 3) compares piagent's
// mcpcache.ConfigHash with the adapter's own computeServerHash on a table
// of definitions and environments: interpolation in each form, secrets
// that are commands, "~", the fields the hash leaves out, and the
// definitions where the adapter throws.
func TestDifferentialConfigHash(t *testing.T) {
	t.Parallel()
	requireE2E(t)
	home := "/home/ana"
	env := map[string]string{"TOKEN": "tok-1", "HOST": "api.example", "EMPTY": "", "DIR": "/srv", "X_Y": "v"}
	env2 := map[string]string{"TOKEN": "tok-2", "HOST": "api.example", "DIR": "/srv"}
	defs := []string{
		`{"command":"node"}`,
		`{"command":"node","args":["server.js","--port","8080"]}`,
		`{"command":"node","args":["${TOKEN}"]}`,
		`{"command":"node","env":{"T":"${TOKEN}","U":"$env:HOST","V":"{env:DIR}/x","W":"${MISSING}","Z":"plain"}}`,
		`{"command":"node","env":{"A":"!op read x","B":"!!literal ${TOKEN}","C":"${EMPTY}"}}`,
		`{"command":"node","env":{}}`, `{"command":"node","env":null}`, `{"command":"node","env":""}`,
		`{"command":"node","cwd":"~"}`, `{"command":"node","cwd":"~/proj"}`, `{"command":"node","cwd":"${DIR}/app"}`, `{"command":"node","cwd":"~user"}`,
		`{"socket":"~/run/s.sock"}`,
		`{"url":"https://${HOST}/mcp"}`, `{"url":"https://${MISSING}/mcp"}`, `{"url":"not a url"}`, `{"url":null}`, `{"url":5}`,
		`{"url":"https://h.example/mcp","headers":{"Authorization":"Bearer ${TOKEN}","X":"!cmd"}}`,
		`{"url":"https://h.example/mcp","bearerToken":"${TOKEN}"}`, `{"url":"https://h.example/mcp","bearerTokenEnv":"TOKEN"}`,
		`{"url":"https://h.example/mcp","bearerTokenEnv":"MISSING"}`, `{"url":"https://h.example/mcp","bearerToken":"!pass show x"}`,
		`{"url":"https://h.example/mcp","requestHeadersCommand":{"command":"${DIR}/bin/h","args":["--t","${TOKEN}"],"env":{"K":"${X_Y}"},"timeoutMs":500}}`,
		`{"url":"https://h.example/mcp","requestHeadersCommand":{"command":"h"}}`,
		`{"command":"node","auth":"oauth","protocolVersion":"2025-06-18","exposeResources":false,"includeTools":["a","b"],"excludeTools":[]}`,
		`{"command":"node","lifecycle":"eager","idleTimeout":5,"debug":true,"directTools":true,"timeout":1e300}`,
		`{"command":"n\u00e9\u2028ode","args":["\u0000","<&>","\ud83d\ude00"],"env":{"b":"1","a":"2","10":"x","9":"y","é":"z"}}`,
		`{"command":"node","args":[1,-0,1.5e-7,1e21,123456789012345680000,true,null,{"z":1,"a":[]}]}`,
	}
	var in bytes.Buffer
	type row struct {
		def map[string]any
		env map[string]string
	}
	var rows []row
	for _, d := range defs {
		var def map[string]any
		if err := json.Unmarshal([]byte(d), &def); err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		for _, e := range []map[string]string{env, env2} {
			rows = append(rows, row{def, e})
			line, _ := json.Marshal(map[string]any{"def": json.RawMessage(d), "env": e})
			in.Write(append(line, '\n'))
		}
	}
	cmd := exec.Command(deps.node, Fixture("config-hash.mjs"), filepath.Dir(deps.adapter))
	cmd.Env = []string{"PATH=" + deps.nodeBin, "HOME=" + home}
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("config-hash.mjs: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	i := 0
	for ; sc.Scan(); i++ {
		var want struct{ Hash, Error string }
		json.Unmarshal(sc.Bytes(), &want)
		r := rows[i]
		got, ok := mcpcache.ConfigHash(r.def, func(k string) (string, bool) { v, ok := r.env[k]; return v, ok }, home)
		switch {
		case want.Error != "" && ok:
			t.Errorf("%s: the adapter throws (%s), piagent hashes %s", defs[i/2], want.Error, got)
		case want.Error == "" && !ok:
			t.Errorf("%s: the adapter hashes %s, piagent finds no hash", defs[i/2], want.Hash)
		case want.Error == "" && got != want.Hash:
			t.Errorf("%s (env %d): the adapter hashes %s, piagent %s", defs[i/2], i%2, want.Hash, got)
		}
	}
	if i != len(rows) {
		t.Fatalf("the adapter answered %d of %d", i, len(rows))
	}
}

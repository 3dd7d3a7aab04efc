package mcpconfig

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/piagent/piagent/internal/digest"
	"github.com/piagent/piagent/internal/jsonc"
)

// The oracle: how a layer's file was read and two definitions merged
// before issue 46's allocation work (main at 53ca746), kept to show that
// what an approval pins has not moved by a byte.

func oracleServerEntries(v any) (map[string]Entry, []string) {
	out := map[string]Entry{}
	m, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return out, nil
		}
		return out, []string{fmt.Sprintf("mcpServers is %s, not an object: the adapter reads no server from it", jsonKind(v))}
	}
	var ignored []string
	for _, name := range sortedNames(m) {
		if entry, ok := m[name].(map[string]any); ok && name != "__proto__" {
			out[name] = entry
		} else if !ok {
			ignored = append(ignored, fmt.Sprintf("mcpServers.%s is %s, not an object: the adapter skips it", name, jsonKind(m[name])))
		}
	}
	return out, ignored
}

func oracleMergeMarked(base Entry, baseLit uint8, hasBase bool, next Entry, nextLit uint8) (Entry, uint8) {
	if !hasBase {
		out := next // shared: loaded entries are never changed
		if nextLit == 0 {
			return out, 0 // no literal field to carry (most entries)
		}
		lit := uint8(0)
		for _, f := range literalFields {
			if _, ok := next[f.key]; ok && nextLit&f.mark != 0 {
				lit |= f.mark
			}
		}
		return out, lit
	}
	drop := map[string]bool{}
	if _, ok := next["command"].(string); ok {
		for _, k := range commandDrops {
			drop[k] = true
		}
	} else if _, ok := next["url"].(string); ok {
		for _, k := range urlDrops {
			drop[k] = true
		}
	} else if _, ok := next["socket"].(string); ok {
		for _, k := range socketDrops {
			drop[k] = true
		}
	}
	if nu, ok := next["url"].(string); ok {
		if bu, same := base["url"].(string); !same || bu != nu {
			for _, k := range urlBoundDrops {
				drop[k] = true
			}
			if o, ok := base["oauth"].(bool); !ok || o {
				drop["oauth"] = true
			}
		}
	}
	if _, ok := next["env"]; ok && baseLit&litEnv != 0 {
		if _, ok := base["env"]; ok {
			if _, ok := next["literalEnv"]; !ok {
				drop["literalEnv"] = true
			}
		}
	}
	out := make(Entry, len(base)+len(next))
	for k, v := range base {
		if !drop[k] {
			out[k] = v
		}
	}
	for k, v := range next {
		out[k] = v
	}
	lit := uint8(0)
	for _, f := range literalFields {
		if _, ok := next[f.key]; ok {
			if nextLit&f.mark != 0 {
				lit |= f.mark
			}
			continue
		}
		if _, ok := base[f.key]; ok && !drop[f.key] && baseLit&f.mark != 0 {
			lit |= f.mark
		}
	}
	return out, lit
}

// corpus is every file of the repository's configuration test data: the
// end-to-end config cases, the CLI's scripts, mcpedit's cases (each file
// inside their txtar archives) and the JSON files under testdata folders.
func corpus(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, glob := range []string{"../../test/e2e/testdata/config/*.txtar", "../cli/testdata/script/*.txtar", "../mcpedit/testdata/*.txtar", "../gate/testdata/*"} {
		names, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			data, err := os.ReadFile(n)
			if err != nil {
				continue // a folder
			}
			if !strings.HasSuffix(n, ".txtar") {
				out[n] = data
				continue
			}
			for _, f := range txtar.Parse(data).Files {
				out[n+":"+f.Name] = f.Data
			}
		}
	}
	for _, glob := range []string{"../*/testdata/*.json", "../../test/e2e/testdata/*.json"} {
		names, _ := filepath.Glob(glob)
		for _, n := range names {
			if data, err := os.ReadFile(n); err == nil {
				out[n] = data
			}
		}
	}
	if len(out) < 200 {
		t.Fatalf("only %d corpus files: the test data moved", len(out))
	}
	// and the documents the parser's own tests are about
	for i, s := range []string{`{"a":1}`, "// c\n{}", "{,}", "[1,2,]", `"x"`, "/* */", `{"a":{"b":[1,"\u00e9",null,true]},"a":2}`,
		`{"mcpServers": {"a": {"command": "x", "env": {"K": "\ud83d"}}, "b": 1, "__proto__": {}, "c": [], "a": {"url": "https://x"}}}`,
		`{"mcp-servers": {"x": {"url": "u", "headers": {"H": "1e400"}, "n": 1e400, "k": -0}}}`,
		"{\"mcpServers\": {\"\xff\": {\"command\": \"\xc3\"}}}", "\ufeff{}", `{"mcpServers": null}`, `{"mcpServers": "x"}`} {
		out[fmt.Sprintf("seed %d", i)] = []byte(s)
	}
	return out
}

// TestParseConfigOracle: every file of the corpus reads as it did, and
// every server entry in it has the digest it had, byte for byte.
func TestParseConfigOracle(t *testing.T) {
	t.Parallel()
	entries := 0
	for name, data := range corpus(t) {
		got, gotBlank, gotErr := parseConfig(bytes.Clone(data))
		var want parsedConfig
		wantBlank := blankJS(data)
		var wantErr error
		if !wantBlank {
			var v any
			v, wantBlank, wantErr = jsonc.Parse(data) // the copying path
			if wantErr == nil && !wantBlank {
				want, _, wantErr = validateConfig(v)
				raw, _ := v.(map[string]any)
				servers := raw["mcpServers"]
				if servers == nil {
					servers = raw["mcp-servers"]
				}
				if _, ok := v.(map[string]any); ok {
					want.servers, want.ignored = oracleServerEntries(servers)
				}
			}
		}
		if gotBlank != wantBlank || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("%s: blank %v err %v, the oracle blank %v err %v", name, gotBlank, gotErr, wantBlank, wantErr)
			continue
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(parsedConfig{})); diff != "" {
			t.Errorf("%s: (-oracle +now)\n%s", name, diff)
		}
		for sn, e := range want.servers {
			w, werr := digest.Canonical(e)
			g, gerr := digest.Canonical(got.servers[sn])
			if !bytes.Equal(w, g) || fmt.Sprint(werr) != fmt.Sprint(gerr) {
				t.Errorf("%s: server %q canonical text %q (%v), the oracle's %q (%v)", name, sn, g, gerr, w, werr)
			}
			entries++
		}
	}
	if entries < 250 {
		t.Errorf("only %d server entries compared", entries)
	}
}

// TestMergeOracle: the merge without a map of the keys it drops lays any
// two definitions over each other as the one with the map did: every pair
// of the corpus's entries, and random ones over every key a merge drops,
// with every literal-field mark.
func TestMergeOracle(t *testing.T) {
	t.Parallel()
	var pool []Entry
	for _, data := range corpus(t) {
		cfg, _, err := parseConfig(bytes.Clone(data))
		if err != nil {
			continue
		}
		for _, sn := range sortedNames(cfg.servers) {
			pool = append(pool, cfg.servers[sn])
		}
	}
	if len(pool) > 250 {
		pool = pool[:250]
	}
	keys := slices.Concat(commandDrops, urlDrops, socketDrops, urlBoundDrops, []string{"oauth", "literalEnv", "timeout", "type", "enabled", "disabled"})
	values := []any{"https://one.example/mcp", "https://two.example/mcp", "node", true, false, nil, 1.0, map[string]any{"K": "V"}, []any{"a"}}
	r := rand.New(rand.NewPCG(46, 1))
	for range 3000 {
		e := Entry{}
		for range r.IntN(7) {
			e[keys[r.IntN(len(keys))]] = values[r.IntN(len(values))]
		}
		pool = append(pool, e)
	}
	lits := []uint8{0, litEnv, litArgs | litCwd, litArgs | litEnv | litCwd | litHeaders}
	check := func(base Entry, bl uint8, hasBase bool, next Entry, nl uint8) {
		want, wantLit := oracleMergeMarked(base, bl, hasBase, next, nl)
		got, gotLit := mergeMarked(base, bl, hasBase, next, nl)
		if !reflect.DeepEqual(got, want) || gotLit != wantLit {
			t.Fatalf("merge of %v (lit %b) under %v (lit %b): %v lit %b, the oracle %v lit %b", next, nl, base, bl, got, gotLit, want, wantLit)
		}
		w, _ := digest.Canonical(want)
		g, _ := digest.Canonical(got)
		if !bytes.Equal(w, g) {
			t.Fatalf("canonical text %q, the oracle's %q", g, w)
		}
	}
	for i, base := range pool {
		for j := 0; j < 25; j++ {
			next := pool[(i*7919+j*104729)%len(pool)]
			bl, nl := lits[(i+j)%len(lits)], lits[(i*3+j)%len(lits)]
			check(base, bl, true, next, nl)
			check(nil, 0, false, next, nl)
		}
	}
}

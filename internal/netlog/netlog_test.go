package netlog

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// TestRecent: the log's refusals, one per host, port and caller with a
// count, the older file read too, old ones left out; the notice names the
// fix.
func TestRecent(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/log.jsonl"
	now := time.Now().UTC()
	line := func(r Refusal) string { b, _ := json.Marshal(r); return string(b) + "\n" }
	os.WriteFile(path+".1", []byte(line(Refusal{Time: now.Add(-48 * time.Hour), Host: "old.test", Port: 443, Who: "agent"})+line(Refusal{Time: now.Add(-time.Hour), Host: "a.test", Port: 443, Who: "agent", Fix: "F"})), 0o600)
	os.WriteFile(path, []byte(line(Refusal{Time: now, Host: "a.test", Port: 443, Who: "agent", Fix: "F"})+"garbage\n"+line(Refusal{Time: now, Host: "a.test", Port: 443, Who: "server s", Fix: "G"})), 0o600)
	got := Recent(path, now.Add(-24*time.Hour), 10)
	if len(got) != 2 || got[0].Host != "a.test" || got[0].Count != 2 || got[1].Who != "server s" {
		t.Errorf("Recent: %+v", got)
	}
	if n := Notice(path, now.Add(-24*time.Hour)); !strings.Contains(n, "a.test:443 (agent, 2×; fix: F)") || strings.Contains(n, "old.test") {
		t.Errorf("Notice: %s", n)
	}
	if n := Notice(dir+"/none", now); n != "" {
		t.Errorf("Notice without a log: %q", n)
	}
}

// Where writes a host and port as net.JoinHostPort does, an IPv6 address
// in brackets, and names a raw connection.
func TestWhere(t *testing.T) {
	for _, c := range []struct {
		r    Refusal
		want string
	}{
		{Refusal{Host: "example.com", Port: 443}, "example.com:443"},
		{Refusal{Host: "::1", Port: 80}, "[::1]:80"},
		{Refusal{Host: "10.0.0.1", Port: 22, Via: "raw TCP"}, "10.0.0.1:22 by raw TCP"},
	} {
		if got := c.r.Where(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
}

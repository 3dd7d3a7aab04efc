// Package netlog is the log of the connections piagent's network proxy
// refused (~/.pi/piagent/network-refused.jsonl, one JSON line each): the
// proxy appends to it, and the session notice and doctor read it. It links
// no network code, so the guard's helper, which reads it, stays small (the
// proxy itself, with net/http and crypto/tls, is its own binary,
// piagent-netproxy).
package netlog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Refusal is one connection the proxy refused.
type Refusal struct {
	Time time.Time `json:"time"`
	Host string    `json:"host"`
	Port int       `json:"port"`
	// Who made it: "agent" (the agent's commands) or "server NAME".
	Who string `json:"who"`
	// Fix is what lets it through.
	Fix string `json:"fix"`
	// Via is "raw TCP" for a connection made past the proxy (refused in
	// the namespace, with ECONNREFUSED), empty for one the proxy refused.
	Via string `json:"via,omitempty"`
}

// Where is the refused host and port, and "raw TCP" for a connection made
// past the proxy.
func (r Refusal) Where() string {
	hp := r.Host + ":" + strconv.Itoa(r.Port)
	if strings.Contains(r.Host, ":") {
		hp = "[" + r.Host + "]:" + strconv.Itoa(r.Port) // as net.JoinHostPort writes an IPv6 address
	}
	if r.Via != "" {
		return hp + " by " + r.Via
	}
	return hp
}

// maxLog bounds the log: past it, the file becomes NAME.1 (one
// older file kept).
const maxLog = 256 << 10

// Append appends r to path as one JSON line, in piagent's own folder
// (which no confined command writes); never following a link there.
func Append(path string, r Refusal) {
	if fi, err := os.Lstat(path); err == nil && fi.Size() > maxLog {
		os.Rename(path, path+".1")
	}
	os.MkdirAll(filepath.Dir(path), 0o700)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	b, _ := json.Marshal(r)
	f.Write(append(b, '\n'))
}

// Refused is one host the proxy refused, with how often and when last.
type Refused struct {
	Refusal
	Count int `json:"count"`
}

// Recent reads the refusals logged at path (and its older file) since
// since: one per host, port and caller, the latest last, at most max.
func Recent(path string, since time.Time, max int) []Refused {
	var out []Refused
	at := map[string]int{}
	for _, f := range []string{path + ".1", path} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			var r Refusal
			if json.Unmarshal([]byte(line), &r) != nil || r.Time.Before(since) {
				continue
			}
			k := fmt.Sprintf("%s\x00%d\x00%s\x00%s", r.Host, r.Port, r.Who, r.Via)
			if i, ok := at[k]; ok {
				out[i].Refusal = r
				out[i].Count++
				continue
			}
			at[k] = len(out)
			out = append(out, Refused{Refusal: r, Count: 1})
		}
	}
	slices.SortStableFunc(out, func(a, b Refused) int { return a.Time.Compare(b.Time) })
	if len(out) > max {
		out = out[len(out)-max:]
	}
	return out
}

// Notice is the session notice's line for the refusals since since, or "".
func Notice(path string, since time.Time) string {
	rs := Recent(path, since, 5)
	if len(rs) == 0 {
		return ""
	}
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%s (%s, %d×; fix: %s)", r.Where(), r.Who, r.Count, r.Fix))
	}
	return "piagent: the network proxy refused connections in the last day: " + strings.Join(parts, "; ")
}

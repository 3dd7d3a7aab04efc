// Package helper is the Go side of the Pi extension: a long-running process
// speaking the versioned, newline-delimited JSON protocol documented in
// docs/helper-protocol.md. It keeps the gate cached, re-validates its
// signature on every request and answers with guard decisions.
package helper

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/guard"
	"github.com/piagent/piagent/internal/mcpcache"
	"github.com/piagent/piagent/internal/paths"
)

// Protocol and Version name what the helper speaks.
const (
	Protocol = "piagent-guard"
	Version  = 1
)

// maxLine bounds one request; a tool input larger than this is refused.
const maxLine = 32 << 20

// Server answers requests for one project.
type Server struct {
	Home, Cwd string
	Getenv    func(string) string
	Build     string // piagent's version, for the handshake
	// Protected extends the guard's list of files no call may write.
	Protected []string

	mu       sync.Mutex
	cache    gate.Cache
	snap     *guard.Snapshot
	snapGate *gate.Gate
}

// Hello is the handshake line.
type Hello struct {
	Protocol string `json:"protocol"`
	Version  int    `json:"version"`
	Piagent  string `json:"piagent"`
	PID      int    `json:"pid"`
}

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type response struct {
	ID     json.RawMessage `json:"id"`
	Result any             `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Error is an in-band error.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ErrFraming ends Serve: a line that is not a JSON object.
var ErrFraming = errors.New("broken framing")

func (s *Server) getenv(k string) string {
	if s.Getenv == nil {
		return ""
	}
	return s.Getenv(k)
}

// Serve writes the handshake, then answers one request per line until in
// ends (nil) or a line is not a JSON object (ErrFraming).
func (s *Server) Serve(in io.Reader, out io.Writer) error {
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(Hello{Protocol: Protocol, Version: Version, Piagent: s.Build, PID: os.Getpid()}); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 {
			var req request
			if jerr := json.Unmarshal(line, &req); jerr != nil || req.Method == "" && req.ID == nil {
				msg := "a request must be one JSON object per line"
				if jerr != nil {
					msg += ": " + jerr.Error()
				}
				_ = enc.Encode(response{ID: json.RawMessage("null"), Error: &Error{Code: "framing", Message: msg}})
				_ = w.Flush()
				return ErrFraming
			}
			resp := s.handle(req)
			if req.ID == nil {
				resp.ID = json.RawMessage("null")
			}
			if err := enc.Encode(resp); err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			_ = enc.Encode(response{ID: json.RawMessage("null"), Error: &Error{Code: "framing", Message: err.Error()}})
			_ = w.Flush()
			return ErrFraming
		}
	}
}

var errTooLong = fmt.Errorf("request line longer than %d bytes", maxLine)

// readLine reads up to LF only.
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxLine {
			return nil, errTooLong
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSuffix(buf, []byte("\n")), err
	}
}

func (s *Server) handle(req request) response {
	resp := response{ID: req.ID}
	result, err := s.dispatch(req.Method, req.Params)
	if err != nil {
		var he *Error
		if !errors.As(err, &he) {
			he = &Error{Code: "internal", Message: err.Error()}
		}
		resp.Error = he
		return resp
	}
	resp.Result = result
	return resp
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func badParams(err error) error { return &Error{Code: "bad-params", Message: err.Error()} }

func (s *Server) dispatch(method string, params json.RawMessage) (any, error) {
	switch method {
	case "ping":
		return map[string]bool{"ok": true}, nil
	case "decide":
		var c guard.Call
		if err := decodeParams(params, &c); err != nil {
			return nil, badParams(err)
		}
		if c.ToolName == "" {
			return nil, badParams(errors.New("toolName is required"))
		}
		snap, err := s.snapshot()
		if err != nil {
			// Fail closed: the gate cannot be evaluated.
			return guard.Decision{Action: guard.Block, Code: "gate-unavailable",
				Reason: "piagent: blocked: the MCP gate cannot be evaluated (" + err.Error() + "); run 'piagent-mcp doctor' in a terminal"}, nil
		}
		return snap.Decide(c), nil
	case "broker":
		var p struct {
			ServerName string `json:"serverName"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, badParams(err)
		}
		snap, err := s.snapshot()
		if err != nil {
			return map[string]string{"action": "deny", "reason": "piagent: the MCP gate cannot be evaluated: " + err.Error()}, nil
		}
		d := snap.Decide(guard.Call{ToolName: "mcp", Input: map[string]any{"server": p.ServerName, "tool": "?"}})
		if d.Allowed() {
			return map[string]string{"action": "allow", "reason": ""}, nil
		}
		return map[string]string{"action": "deny", "reason": d.Reason}, nil
	case "redact":
		var p struct {
			Content json.RawMessage `json:"content"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, badParams(err)
		}
		return map[string]any{"content": p.Content, "removed": 0, "rules": []string{}}, nil
	case "state":
		g, err := s.gate()
		if err != nil {
			return nil, &Error{Code: "gate-unavailable", Message: err.Error()}
		}
		return stateOf(g, s.getenv("PIAGENT_NO_MCP_NOTICE") == "1"), nil
	}
	return nil, &Error{Code: "unknown-method", Message: fmt.Sprintf("unknown method %q", method)}
}

func decodeParams(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	return json.Unmarshal(raw, v)
}

func (s *Server) options() gate.Options {
	agentDir := paths.AgentDir(s.Home, s.Cwd, s.Getenv)
	return gate.Options{Home: s.Home, Cwd: s.Cwd, Getenv: s.Getenv, ConfigPath: s.getenv("PIAGENT_MCP_CONFIG"),
		Extra: []string{filepath.Join(agentDir, "mcp-cache.json")}}
}

func (s *Server) gate() (*gate.Gate, error) {
	return s.cache.Get(s.options())
}

// snapshot returns the guard snapshot for the current gate, rebuilding it
// only when the gate was recomputed.
func (s *Server) snapshot() (*guard.Snapshot, error) {
	g, err := s.gate()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if g == s.snapGate && s.snap != nil {
		return s.snap, nil
	}
	agentDir := g.View.AgentDir
	mc, err := mcpcache.Load(filepath.Join(agentDir, "mcp-cache.json"))
	if err != nil {
		mc = nil // the adapter sees no cache either; reverse naming is then by prefix only
	}
	s.snap = guard.NewSnapshot(g, guard.Options{
		Cache:       mc,
		AdapterPath: s.getenv("PIAGENT_ADAPTER_PATH"),
		Protected:   s.Protected,
		Resolve:     resolve,
	})
	s.snapGate = g
	return s.snap, nil
}

// resolve follows symlinks of p, or of its nearest existing parent.
func resolve(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	dir, base := filepath.Split(p)
	if r, err := filepath.EvalSymlinks(filepath.Clean(dir)); err == nil {
		return filepath.Join(r, base)
	}
	return ""
}

type serverState struct {
	Name       string `json:"name"`
	State      string `json:"state"`
	Reason     string `json:"reason"`
	Fix        string `json:"fix,omitempty"`
	Repository bool   `json:"repositoryControlled"`
	Scope      string `json:"scope"`
	Source     string `json:"source"`
	Kind       string `json:"kind,omitempty"`
}

type state struct {
	Project   string        `json:"project"`
	FullBlock bool          `json:"fullBlock"`
	Blocks    []gate.Block  `json:"blocks"`
	Servers   []serverState `json:"servers"`
	Notice    []string      `json:"notice"`
}

func stateOf(g *gate.Gate, quiet bool) state {
	st := state{Project: g.Project, FullBlock: g.FullBlock(), Blocks: g.Blocks, Servers: []serverState{}, Notice: []string{}}
	if st.Blocks == nil {
		st.Blocks = []gate.Block{}
	}
	for _, s := range g.Servers {
		st.Servers = append(st.Servers, serverState{Name: s.Name, State: s.State, Reason: s.Reason, Fix: s.Fix,
			Repository: s.Repository, Scope: s.Config.Scope, Source: s.Config.Source.File, Kind: s.Config.Source.Kind})
	}
	if !quiet {
		st.Notice = append(st.Notice, g.Notice()...)
	}
	return st
}

// Package helper is the Go side of the Pi extension: a long-running process
// speaking the versioned, newline-delimited JSON protocol documented in
// docs/helper-protocol.md. It frames requests and answers; every answer
// comes from internal/engine.
package helper

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/piagent/piagent/internal/catalogue"
	"github.com/piagent/piagent/internal/engine"
	"github.com/piagent/piagent/internal/guard"
	"github.com/piagent/piagent/internal/jsonc"
	"github.com/piagent/piagent/internal/sandboxexec"
)

// Protocol and Version name what the helper speaks.
const (
	Protocol = "piagent-guard"
	// Version 2: a fix is data ({"text", "steps": [{"sub", "args"}],
	// "note"}) in decisions, state and withheld, and the notice is a list
	// of {"text", "fix"}; version 1 carried them as words.
	Version = 2
)

// maxLine bounds one request; a tool input larger than this is refused.
const maxLine = 32 << 20

// Server answers requests for one project with its engine.
type Server struct {
	Engine *engine.Engine
	Build  string // piagent's version, for the handshake
	// Pace, when set, is told when a request arrives (Busy) and when the
	// helper has answered with no other request waiting (Idle): the mains'
	// collector between calls (gcpolicy.Between). Nil in tests.
	Pace Pace

	// mu is held around each request and each background refresh
	// (drain.go): the engine answers one caller at a time.
	mu sync.Mutex
	// onCall and between count the drains that found events during
	// requests and between them; refreshes the background refreshes
	// (tests; under mu)
	onCall, between, refreshes int64
}

// Pace is told when the helper is busy and when it waits.
type Pace interface {
	Busy()
	Idle()
}

// Hello is the handshake line.
type Hello struct {
	Protocol string `json:"protocol"`
	Version  int    `json:"version"`
	Piagent  string `json:"piagent"`
	PID      int    `json:"pid"`
	// Bin is the helper's own executable, absolute: the extension runs it
	// for every later helper and for `piagent sandbox exec`, and never looks
	// piagent up on PATH again.
	Bin string `json:"bin,omitempty"`
	// Sandbox is piagent-sandbox beside Bin, when it is installed there
	// and no one but root or this person may replace it: the extension
	// runs `<Sandbox> exec …` in place of `<Bin> sandbox exec …`.
	Sandbox string `json:"sandbox,omitempty"`
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
type Error = engine.Error

// ErrFraming ends Serve: a line that is not a JSON object.
var ErrFraming = errors.New("broken framing")

func (s *Server) bin() string {
	if len(s.Engine.Binaries) > 0 {
		return s.Engine.Binaries[0]
	}
	return ""
}

// Serve writes the handshake, then answers one request per line until in
// ends (nil) or a line is not a JSON object (ErrFraming).
func (s *Server) Serve(in io.Reader, out io.Writer) error {
	d := s.startDrain()
	defer d.stop()
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(Hello{Protocol: Protocol, Version: Version, Piagent: s.Build, PID: os.Getpid(), Bin: s.bin(), Sandbox: sandboxexec.Lean(s.bin())}); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	r := bufio.NewReaderSize(in, 64<<10)
	var buf []byte // appendDecision's, used again
	for {
		line, err := readLine(r)
		if s.Pace != nil {
			s.Pace.Busy()
		}
		if len(bytes.TrimSpace(line)) > 0 {
			req, ok := splitRequest(line)
			var jerr error
			if !ok {
				jerr = json.Unmarshal(line, &req)
			}
			if jerr != nil || req.Method == "" && req.ID == nil {
				msg := "a request must be one JSON object per line"
				if jerr != nil {
					msg += ": " + jerr.Error()
				}
				_ = enc.Encode(response{ID: json.RawMessage("null"), Error: &Error{Code: "framing", Message: msg}})
				_ = w.Flush()
				return ErrFraming
			}
			// the answer is written out with the lock held: it may share
			// memory with the engine's gate, which a refresh replaces
			s.mu.Lock()
			n := s.Engine.Drained()
			s.Engine.Begin()
			resp := s.handle(req)
			s.Engine.End()
			s.onCall += s.Engine.Drained() - n
			d.check()
			if req.ID == nil {
				resp.ID = json.RawMessage("null")
			}
			var eerr error
			if b, ok := appendDecision(buf[:0], resp); ok {
				buf = b
				w.Write(b)
			} else {
				eerr = enc.Encode(resp)
			}
			s.mu.Unlock()
			if eerr != nil {
				return eerr
			}
			if err := w.Flush(); err != nil {
				return err
			}
		}
		if s.Pace != nil && r.Buffered() == 0 && err == nil {
			s.Pace.Idle()
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

// splitRequest reads a line of the shape the extension writes,
// {"id":N,"method":"name","params":…} with N a run of digits and name a
// run of lower-case letters, without a first pass over the whole line: the
// params are read once, by the method. ok is false for any other line,
// which encoding/json reads; the two give the same request for every line
// of this shape whose params are one JSON value (FuzzSplitRequest), and
// where they are not, the method's decoding reports it as it would.
func splitRequest(line []byte) (request, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"id":`))
	if !ok {
		return request{}, false
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || n > 15 || rest[0] == '0' && n > 1 {
		return request{}, false
	}
	id := rest[:n]
	rest, ok = bytes.CutPrefix(rest[n:], []byte(`,"method":"`))
	if !ok {
		return request{}, false
	}
	m := 0
	for m < len(rest) && rest[m] >= 'a' && rest[m] <= 'z' {
		m++
	}
	method := rest[:m]
	rest, ok = bytes.CutPrefix(rest[m:], []byte(`","params":`))
	if !ok || m == 0 {
		return request{}, false
	}
	params, ok := bytes.CutSuffix(rest, []byte("}"))
	if !ok || !json.Valid(params) {
		return request{}, false
	}
	return request{ID: json.RawMessage(id), Method: string(method), Params: json.RawMessage(params)}, true
}

var errTooLong = fmt.Errorf("request line longer than %d bytes", maxLine)

// readLine reads up to LF only. A line that fits r's buffer is returned
// in place, without a copy: it is valid until the next read from r, and
// Serve answers it, copying what it keeps, before reading again. Its
// capacity ends with it: the buffer holds the next requests already when
// the extension writes them side by side, and an append to this line (or
// to any part of it, the params) copies instead of writing over them.
func readLine(r *bufio.Reader) ([]byte, error) {
	chunk, err := r.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		line := bytes.TrimSuffix(chunk, []byte("\n"))
		return line[:len(line):len(line)], err
	}
	buf := append([]byte(nil), chunk...)
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

func badParams(err error) error { return &Error{Code: "bad-params", Message: err.Error()} }

// call is the params of decide and check.
func call(params json.RawMessage) (guard.Call, error) {
	c, ok := fastCall(params)
	if !ok || c.Input == nil {
		// not the extension's usual shape: held to the protocol first, so
		// that a missing or null input is never read as an empty one
		if err := checkParams("decide", params); err != nil {
			return guard.Call{}, err
		}
		c = guard.Call{}
		if err := decodeParams(params, &c); err != nil {
			return c, badParams(err)
		}
	}
	if err := nonEmpty("toolName", c.ToolName); err != nil {
		return c, err
	}
	return c, nil
}

// appendDecision appends resp as enc.Encode writes it when it is the usual
// answer, a decision to a request with a numeric id, and reports false for
// any other, which encoding/json writes (FuzzAppendDecision holds the two
// together).
func appendDecision(b []byte, resp response) ([]byte, bool) {
	d, ok := resp.Result.(guard.Decision)
	if !ok || resp.Error != nil || len(resp.ID) == 0 || len(resp.ID) > 15 {
		return b, false
	}
	for _, c := range resp.ID {
		if c < '0' || c > '9' {
			return b, false
		}
	}
	b = append(b, `{"id":`...)
	b = append(b, resp.ID...)
	b = append(b, `,"result":{"action":`...)
	b = jsonc.AppendString(b, d.Action)
	b = append(b, `,"code":`...)
	b = jsonc.AppendString(b, d.Code)
	for _, f := range [...]struct{ key, v string }{
		{`,"reason":`, d.Reason}, {`,"server":`, d.Server}, {`,"state":`, d.State},
	} {
		if f.v != "" {
			b = jsonc.AppendString(append(b, f.key...), f.v)
		}
	}
	if d.Fix != nil {
		b = d.Fix.AppendJSON(append(b, `,"fix":`...))
	}
	for _, f := range [...]struct{ key, v string }{{`,"rule":`, d.Rule}, {`,"subject":`, d.Subject}} {
		if f.v != "" {
			b = jsonc.AppendString(append(b, f.key...), f.v)
		}
	}
	return append(b, "}}\n"...), true
}

// fastCall reads params without reflection when they are an object of
// guard.Call's fields, spelled as their tags spell them, each with a value
// of its type: the extension's every call. Anything else is left to
// encoding/json; where fastCall answers, the two agree (FuzzFastCall).
func fastCall(params []byte) (c guard.Call, ok bool) {
	v, ok := jsonc.DecodeJSON(string(params))
	m, isObject := v.(map[string]any)
	if !ok || !isObject {
		return guard.Call{}, false
	}
	for k, x := range m {
		switch k {
		case "toolName":
			c.ToolName, ok = x.(string)
		case "input":
			c.Input, ok = x.(map[string]any)
		case "sourcePath":
			c.SourcePath, ok = x.(string)
		default:
			ok = false
		}
		if !ok {
			return guard.Call{}, false
		}
	}
	return c, true
}

func (s *Server) dispatch(method string, params json.RawMessage) (any, error) {
	en := s.Engine
	if method != "decide" && method != "check" { // call checks its own
		if err := checkParams(method, params); err != nil {
			return nil, err
		}
	}
	switch method {
	case "ping":
		return struct {
			OK bool `json:"ok"`
		}{true}, nil
	case "decide":
		c, err := call(params)
		if err != nil {
			return nil, err
		}
		return en.Decide(c), nil
	case "check":
		c, err := call(params)
		if err != nil {
			return nil, err
		}
		return en.Check(c), nil
	case "mode":
		var p struct {
			Set string `json:"set"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, badParams(err)
		}
		return en.Mode(p.Set)
	case "broker":
		var p struct {
			ServerName       string `json:"serverName"`
			OriginalToolName string `json:"originalToolName"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, badParams(err)
		}
		if err := nonEmpty("serverName", p.ServerName); err != nil {
			return nil, err
		}
		return en.Broker(p.ServerName, p.OriginalToolName), nil
	case "redact":
		var p struct {
			ToolName string          `json:"toolName"`
			Input    map[string]any  `json:"input"`
			Content  json.RawMessage `json:"content"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, badParams(err)
		}
		if err := nonEmpty("toolName", p.ToolName); err != nil {
			return nil, err
		}
		return en.Redact(p.ToolName, p.Input, p.Content)
	case "host":
		var p struct {
			Argv []string `json:"argv"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, badParams(err)
		}
		return en.Host(p.Argv), nil
	case "report":
		var p struct {
			Tools []catalogue.ReportedTool `json:"tools"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, badParams(err)
		}
		for _, t := range p.Tools {
			if err := nonEmpty("every tool's name", t.Name); err != nil {
				return nil, err
			}
		}
		return en.Report(p.Tools)
	case "state":
		return en.State()
	case "withheld":
		var p struct {
			Tools []engine.OfferedTool `json:"tools"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, badParams(err)
		}
		return en.Withheld(p.Tools)
	}
	return nil, &Error{Code: "unknown-method", Message: fmt.Sprintf("unknown method %q", method)}
}

func decodeParams(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	return json.Unmarshal(raw, v)
}

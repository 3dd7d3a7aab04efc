//go:build linux

package sandbox

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// The init's spec travels on descriptor 3 as a flat sequence of fields in
// initSpec's order (Profile's fields in theirs): a string is its length as
// a uvarint, then its bytes; a list its length, then its items; a flag one
// byte, 0 or 1; a number its decimal string. Not JSON: the init is started
// before every command, and decoding by reflection was about 7% of its
// samples in perf. TestInitSpecRoundTrip fills every field, so one added to either
// struct and not here fails it.

func (s initSpec) encode() []byte {
	var w specWriter
	p := s.Profile
	w.str(p.Name)
	w.strs(p.Writable)
	w.strs(p.ReadOnly)
	w.strs(p.Pinned)
	w.strs(p.Unprotected)
	w.strs(p.Hidden)
	w.strs(p.HiddenDirs)
	w.strs(p.Denied)
	w.strs(p.Absent)
	w.strs(p.Listed)
	w.strs(p.Env)
	w.flag(p.NoUnixSockets)
	w.flag(p.NetworkOff)
	w.flag(p.Registries)
	w.strs(p.AllowHosts)
	w.str(p.NetLog)
	w.str(p.NetWho)
	w.uint(uint64(len(p.Protected)))
	for _, pp := range p.Protected {
		w.str(pp.Path)
		w.flag(pp.Dir)
	}
	w.str(strconv.Itoa(s.ABI))
	w.str(s.Path)
	w.strs(s.Argv)
	w.strs(s.Env)
	w.str(s.Dir)
	w.str(s.Empty)
	w.flag(s.Probe)
	w.str(s.Fault)
	w.strs(s.Listen)
	return w.b
}

// decodeInitSpec reads what encode wrote: all of it, and nothing more.
func decodeInitSpec(b []byte) (initSpec, error) {
	r := specReader{b: b}
	var s initSpec
	p := &s.Profile
	p.Name = r.str()
	p.Writable = r.strs()
	p.ReadOnly = r.strs()
	p.Pinned = r.strs()
	p.Unprotected = r.strs()
	p.Hidden = r.strs()
	p.HiddenDirs = r.strs()
	p.Denied = r.strs()
	p.Absent = r.strs()
	p.Listed = r.strs()
	p.Env = r.strs()
	p.NoUnixSockets = r.flag()
	p.NetworkOff = r.flag()
	p.Registries = r.flag()
	p.AllowHosts = r.strs()
	p.NetLog = r.str()
	p.NetWho = r.str()
	if n := r.count(); n > 0 {
		p.Protected = make([]Path, n)
		for i := range p.Protected {
			p.Protected[i] = Path{Path: r.str(), Dir: r.flag()}
		}
	}
	abi := r.str()
	s.Path = r.str()
	s.Argv = r.strs()
	s.Env = r.strs()
	s.Dir = r.str()
	s.Empty = r.str()
	s.Probe = r.flag()
	s.Fault = r.str()
	s.Listen = r.strs()
	if r.err != nil {
		return initSpec{}, r.err
	}
	if len(r.b) != 0 {
		return initSpec{}, errors.New("trailing bytes")
	}
	var err error
	if s.ABI, err = strconv.Atoi(abi); err != nil {
		return initSpec{}, errors.New("bad ABI " + strconv.Quote(abi))
	}
	return s, nil
}

type specWriter struct{ b []byte }

func (w *specWriter) uint(n uint64) { w.b = binary.AppendUvarint(w.b, n) }

func (w *specWriter) str(s string) {
	w.uint(uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *specWriter) strs(ss []string) {
	w.uint(uint64(len(ss)))
	for _, s := range ss {
		w.str(s)
	}
}

func (w *specWriter) flag(f bool) {
	if f {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

// specReader reads fields until the first error, which it keeps; every
// read after it returns the zero value.
type specReader struct {
	b   []byte
	err error
}

var errBadSpec = errors.New("malformed")

// count is a list's length, no more than the bytes left (each item takes
// at least one).
func (r *specReader) count() int {
	if r.err != nil {
		return 0
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)-k) {
		r.err = errBadSpec
		return 0
	}
	r.b = r.b[k:]
	return int(n)
}

func (r *specReader) str() string {
	n := r.count()
	if r.err != nil || n > len(r.b) {
		r.err = errBadSpec
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// strs reads a list of strings; an empty list is nil, as JSON's null was.
func (r *specReader) strs() []string {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return out
}

func (r *specReader) flag() bool {
	if r.err != nil {
		return false
	}
	if len(r.b) == 0 || r.b[0] > 1 {
		r.err = errBadSpec
		return false
	}
	f := r.b[0] == 1
	r.b = r.b[1:]
	return f
}

package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/piagent/piagent/internal/atomicfile"
	"github.com/piagent/piagent/internal/safefile"
)

// RecordVersion is the format version of setup.json.
const RecordVersion = 1

// ErrRecord is a setup.json that is not one piagent wrote.
var ErrRecord = errors.New("invalid setup record")

// Record is what setup installed, kept in ~/.pi/piagent/setup.json.
type Record struct {
	Version int `json:"version"`
	// Extension is the folder of the extension setup installed last.
	Extension string `json:"extension"`
	// AdapterInstalled is set once setup installed pi-mcp-adapter where Pi
	// listed none; uninstall removes the adapter only then.
	AdapterInstalled bool `json:"adapterInstalled"`
	// Preset is the preset setup seeded into the global scope; empty with
	// --no-mcp.
	Preset string `json:"preset,omitempty"`
	// NoMCP records a --no-mcp setup: --check does not ask for the adapter.
	NoMCP bool `json:"noMCP,omitempty"`
}

// DecodeRecord reads a record strictly: known fields only, this version.
func DecodeRecord(data []byte) (Record, error) {
	var r Record
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Record{}, fmt.Errorf("%w: %w", ErrRecord, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Record{}, fmt.Errorf("%w: data after the object", ErrRecord)
	}
	if r.Version != RecordVersion {
		return Record{}, fmt.Errorf("%w: version %d, want %d", ErrRecord, r.Version, RecordVersion)
	}
	return r, nil
}

// Encode is the record as setup writes it.
func (r Record) Encode() []byte {
	r.Version = RecordVersion
	data, _ := json.MarshalIndent(r, "", "  ")
	return append(data, '\n')
}

// ReadRecord loads the record at path; found is false when there is none.
func ReadRecord(path string) (r Record, found bool, err error) {
	data, err := safefile.Read(path, safefile.Options{Own: true})
	if errors.Is(err, os.ErrNotExist) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, err
	}
	r, err = DecodeRecord(data)
	if err != nil {
		return Record{}, true, fmt.Errorf("%s: %w", path, err)
	}
	return r, true, nil
}

// WriteRecord saves r at path atomically, 0600, its folder 0700. It
// reports whether the file changed; an identical record is not rewritten.
func WriteRecord(path string, r Record) (bool, error) {
	data := r.Encode()
	if old, err := safefile.Read(path, safefile.Options{Own: true}); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, err
	}
	if err := atomicfile.WriteMode(path, data, 0o600); err != nil {
		return false, err
	}
	return true, nil
}

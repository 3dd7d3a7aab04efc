package helper

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/piagent/piagent/internal/engine"
)

// TestVersionPair holds the protocol's version in its four places
// together: the helper's Version, the extension's PROTOCOL_VERSION, the
// stub helper the extension's tests run against, and the protocol's
// document. Version 2 is the structured seam (issue 43): a fix is data.
func TestVersionPair(t *testing.T) {
	if Version != 2 {
		t.Errorf("Version %d: the structured seam is version 2; a later change bumps it here and in each place below", Version)
	}
	root := filepath.Join("..", "..")
	for file, want := range map[string]string{
		"extensions/pi/helper.ts":                  fmt.Sprintf("export const PROTOCOL_VERSION = %d;", Version),
		"extensions/pi/testdata/stub-helper.mjs":   fmt.Sprintf(`[process.env.STUB_HANDSHAKE ?? ""] ?? %d;`, Version),
		"docs/helper-protocol.md":                  fmt.Sprintf("# The guard helper protocol (`piagent-guard`, version %d)", Version),
		"extensions/pi/testdata/extension.test.ts": fmt.Sprintf("this extension speaks piagent-guard version %d", Version),
	} {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s does not say %q", file, want)
		}
	}
}

// TestOldExtensionFailsClosed: an extension of version 1 (piagent before
// issue 43, which read fixes as words) meets this helper. Its client, as
// shipped, takes a handshake only when protocol and version are its own
// ("piagent-guard", 1), and otherwise treats the helper as unavailable,
// blocking every tool call with the hint to install the extension that
// matches the binary. This helper's handshake is not one it takes. The
// other direction (this extension, an older or newer helper) is the
// extension's test "a helper of another protocol version fails closed".
func TestOldExtensionFailsClosed(t *testing.T) {
	home, cwd := project(t)
	var hello Hello
	pr, pw, _ := os.Pipe()
	defer pr.Close()
	go func() {
		s := &Server{Engine: &engine.Engine{Home: home, Cwd: cwd}, Build: "test"}
		_ = s.Serve(strings.NewReader(""), pw)
		pw.Close()
	}()
	if err := json.NewDecoder(pr).Decode(&hello); err != nil {
		t.Fatal(err)
	}
	const v1Protocol, v1Version = "piagent-guard", 1 // helper.ts as version 1 shipped it
	if hello.Protocol == v1Protocol && hello.Version == v1Version {
		t.Fatalf("handshake %+v: a version-1 extension would take it and read data as words", hello)
	}
	if hello.Protocol != Protocol || hello.Version != Version {
		t.Fatalf("handshake %+v", hello)
	}
}

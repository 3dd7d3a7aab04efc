package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Issue 38: Pi loads every extension, piagent's guard among them, through
// jiti, which keeps what it transpiled in <TMPDIR>/jiti and trusts a cached
// file whose end matches its source's hash. Code put in front of each
// cached file runs inside Pi at its next start (the control, plain pi);
// piagent pi gives Pi a TMPDIR of the person's own, so the poisoned cache in
// the system temporary folder never runs.
func TestPoisonedJitiCacheDoesNotRun(t *testing.T) {
	t.Parallel()
	w, bins := guardWorld(t)
	sysTmp := t.TempDir() // the system temporary folder of this test alone
	marker := filepath.Join(w.Dir, "jiti-ran")
	plain := guarded(bins, PiOptions{Prompt: "Say hello", Env: map[string]string{"TMPDIR": sysTmp}})

	// Plain pi fills the cache; then every cached file is poisoned.
	w.StartLLM(Say("hello"))
	requireExit0(t, w.RunPi(plain))
	cached, _ := filepath.Glob(filepath.Join(sysTmp, "jiti", "*"))
	if len(cached) == 0 {
		t.Fatalf("plain pi left no jiti cache in %s", sysTmp)
	}
	for _, f := range cached {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		poison := fmt.Sprintf("require(\"node:fs\").appendFileSync(%s, %s);\n", jsonString(marker), jsonString(filepath.Base(f)+"\n"))
		if err := os.WriteFile(f, append([]byte(poison), data...), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The control: plain pi runs the poisoned code.
	w.StartLLM(Say("hello"))
	requireExit0(t, w.RunPi(plain))
	if w.Read(marker) == "" {
		t.Fatalf("control: plain pi did not run the poisoned jiti cache (%d files), so this test shows nothing", len(cached))
	}
	os.Remove(marker)

	// piagent pi, started with the same system temporary folder.
	w.StartLLM(Say("hello"))
	r := w.runLaunched(bins, PiOptions{Prompt: "Say hello", Env: map[string]string{"TMPDIR": sysTmp, "PIAGENT_PI_TMPDIR": ""}})
	requireExit0(t, r)
	if got := r.FinalText(); got != "hello" {
		t.Errorf("final text = %q\n%s", got, r.Describe())
	}
	if ran := w.Read(marker); ran != "" {
		t.Errorf("piagent pi ran the poisoned jiti cache: %s", ran)
	}
	own, _ := filepath.Glob(filepath.Join(w.Home, ".pi", "piagent", "tmp", "jiti", "*"))
	if len(own) == 0 {
		t.Errorf("piagent pi's Pi kept no jiti cache in ~/.pi/piagent/tmp")
	}
}

// jsonString is s as a JSON string, which JavaScript reads as the same string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

package ops

import (
	"slices"
	"testing"
)

// The diff approve shows of a changed repository part: what was approved
// ("- "), what is there now ("+ "), and what both hold.
func TestLineDiff(t *testing.T) {
	got := lineDiff([]string{"{", `"command": "a"`, `"args": []`, "}"}, []string{"{", `"command": "b"`, `"args": []`, "}"})
	want := []string{"  {", `- "command": "a"`, `+ "command": "b"`, `  "args": []`, "  }"}
	if !slices.Equal(got, want) {
		t.Errorf("lineDiff = %q, want %q", got, want)
	}
}

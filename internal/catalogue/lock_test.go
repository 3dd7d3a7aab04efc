package catalogue

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFirstSightPinDoesNotWaitOnDecidesPath (issue 40, item 4): a first
// sight pinned on the way to a decision gives up on a held lock within its
// short bound, and the state carries the holder as its error (the call is
// then blocked, catalogue-unreadable), instead of holding the decision past
// the extension's timeout.
func TestFirstSightPinDoesNotWaitOnDecidesPath(t *testing.T) {
	t.Parallel()
	pins := filepath.Join(t.TempDir(), "pins.json")
	holder := exec.Command("sleep", "30")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	pid := holder.Process.Pid
	stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	start := "0"
	if i := strings.LastIndexByte(string(stat), ')'); i > 0 {
		if f := strings.Fields(string(stat[i+1:])); len(f) > 19 {
			start = f[19]
		}
	}
	os.WriteFile(pins+".lock", []byte(fmt.Sprintf("%d %s\n", pid, start)), 0o600)
	began := time.Now()
	st := against(Catalogue{Tools: map[string]string{"echo": "sha256:1"}}, map[string]Pin{}, nil, pins, "k", true, false, false, time.Now())
	if took := time.Since(began); took > time.Second {
		t.Errorf("the first-sight pin waited %v", took)
	}
	if !strings.Contains(st.Err, fmt.Sprintf("pid %d", pid)) {
		t.Errorf("state error %q does not name the holder", st.Err)
	}
}

package policy

import (
	"sync"
	"testing"
)

// TestMergeConcurrent: Merge parses the embedded base policy on every
// call, and hujson's Standardize blanked its comments in place, in the
// embedded bytes: two Merges at once (parallel tests, the helper) raced,
// and one could read a half-blanked comment ("invalid literal") and panic.
// Run with -race; without it the panic shows now and then.
func TestMergeConcurrent(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := Merge(Input{}, Input{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

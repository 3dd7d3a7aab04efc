package lazyre

import (
	"sync"
	"testing"
)

func TestNew(t *testing.T) {
	re := New(`^a+$`)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !re().MatchString("aaa") || re().MatchString("b") {
				t.Error("wrong match")
			}
		}()
	}
	wg.Wait()
	if first, again := re(), re(); first != again {
		t.Fatal("compiled twice")
	}
	bad := New(`(`)
	defer func() {
		if recover() == nil {
			t.Fatal("a bad expression did not panic on first use")
		}
	}()
	bad()
}

package shell

import (
	"slices"
	"testing"
)

// ReadsAt and WritesAt of every command are cut from one array: an append
// by a caller to one of them copies, and never writes over the words of
// the next (a command's writes, the next command's reads), which the
// policy judges after.
func TestReadsWritesAtApart(t *testing.T) {
	a, err := Parse("cat a b > c; cp d e; sed -i s/x/y/ f g; cat h")
	if err != nil {
		t.Fatal(err)
	}
	n := len(a.Commands)
	var reads, writes [][]Word
	for i := range n {
		reads = append(reads, slices.Clone(a.ReadsAt(i)))
		writes = append(writes, slices.Clone(a.WritesAt(i)))
		if len(reads[i]) == 0 {
			t.Fatalf("command %d reads nothing", i)
		}
	}
	junk := Word{Lit: "/etc/passwd"}
	for i := range n {
		_ = append(a.ReadsAt(i), junk, junk, junk)
		_ = append(a.WritesAt(i), junk, junk, junk)
	}
	for i := range n {
		if !slices.Equal(a.ReadsAt(i), reads[i]) || !slices.Equal(a.WritesAt(i), writes[i]) {
			t.Errorf("command %d after appends: reads %v writes %v, were %v %v", i, a.ReadsAt(i), a.WritesAt(i), reads[i], writes[i])
		}
	}
}

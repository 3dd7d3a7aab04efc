//go:build !linux

package atomicfile

import "os"

// openUnnamed: no unnamed files here; the temporary file has a name.
func openUnnamed(string, os.FileMode) (*os.File, bool) { return nil, false }

func linkUnnamed(*os.File, string) error { return nil }

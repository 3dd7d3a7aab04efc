package imports

// Helpers only the tests use.

// Known reports whether kind is one of Kinds.
func Known(kind string) bool {
	for _, k := range Kinds {
		if k == kind {
			return true
		}
	}
	return false
}

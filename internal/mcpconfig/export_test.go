package mcpconfig

import "strings"

// Helpers only the tests use.

// Server returns the named server the adapter loads, or else the union-only
// entry of that name.
func (v *View) Server(name string) (*Server, bool) {
	var fallback *Server
	for i := range v.Servers {
		s := &v.Servers[i]
		if s.Name != name {
			continue
		}
		if s.AdapterLoads {
			return s, true
		}
		if fallback == nil {
			fallback = s
		}
	}
	return fallback, fallback != nil
}

// AdapterFails lists the Skipped entries that stop the adapter from loading
// any configuration (see FatalReason).
func (v *View) AdapterFails() []Skipped {
	var out []Skipped
	for _, s := range v.Skipped {
		if strings.HasPrefix(s.Reason, FatalReason) {
			out = append(out, s)
		}
	}
	return out
}

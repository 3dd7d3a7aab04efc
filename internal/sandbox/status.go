package sandbox

// Status says what this machine can enforce.
type Status struct {
	// Mechanism is "landlock" (Linux), "seatbelt" (macOS), or "" when none
	// applies.
	Mechanism string `json:"mechanism"`
	ABI       int    `json:"abi"`
	// Scoped is set when Landlock also confines signals and abstract Unix
	// sockets (ABI 6 and later).
	Scoped bool `json:"scoped"`
	// Seccomp is set when the Unix-socket filter can be installed.
	Seccomp bool `json:"seccomp"`
	// MountNamespace is set when registered paths inside writable folders
	// can be mounted read-only and secrets hidden (CAP_SYS_ADMIN).
	MountNamespace bool `json:"mountNamespace"`
	// Missing names what is lacking, when Mechanism is "".
	Missing string `json:"missing,omitempty"`
}

// UnavailableError is returned when no sandbox applies on this machine.
type UnavailableError struct{ Missing string }

func (e *UnavailableError) Error() string { return "no sandbox can be applied: " + e.Missing }

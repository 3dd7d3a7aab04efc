package sandbox

// Status says what this machine can enforce, for the person running
// piagent: what holds for root and for an ordinary user differs.
type Status struct {
	// Mechanism is "landlock" (Linux), "seatbelt" (macOS), or "" when none
	// applies.
	Mechanism string `json:"mechanism"`
	ABI       int    `json:"abi"`
	// Scoped is set when Landlock also confines signals and abstract Unix
	// sockets (ABI 6 and later).
	Scoped bool `json:"scoped"`
	// Seccomp is set when the system-call filter can be installed (Unix
	// sockets, io_uring, set-ID modes, devices, terminal injection).
	Seccomp bool `json:"seccomp"`
	// Namespaces is "root" (this process holds CAP_SYS_ADMIN), "user" (an
	// unprivileged user namespace can mount) or "" (none can be made here:
	// NamespaceMissing says why and names the fix).
	Namespaces       string `json:"namespaces"`
	NamespaceMissing string `json:"namespaceMissing,omitempty"`
	// MountNamespace is set when registered paths inside writable folders
	// can be mounted read-only and secrets hidden: Namespaces is not "".
	MountNamespace bool `json:"mountNamespace"`
	// What follows from the above, each for this person on this machine.
	PrivateTmp    bool `json:"privateTmp"`    // /tmp, /var/tmp read-only; TMPDIR private; /dev/shm its own
	HomeReadOnly  bool `json:"homeReadOnly"`  // every mount read-only but the writable folders: no chmod, chown or utimes of the person's files
	SecretsHidden bool `json:"secretsHidden"` // the project's secrets, Pi's auth.json and the person's secret stores read as empty
	// StoresUnreadable: the person's secret stores and Pi's auth.json
	// (outside the writable folders) cannot be read, one a person's tool
	// creates or renames over while a command runs included: Landlock's
	// rules (Seatbelt's by path), with or without namespaces.
	StoresUnreadable bool `json:"storesUnreadable"`
	CapsDropped      bool `json:"capsDropped"` // bounding, permitted, effective, inheritable and ambient sets empty
	// NoSurvivors is set when every process a command starts ends with it
	// (its own PID namespace); otherwise a detached process can outlive
	// the call.
	NoSurvivors bool `json:"noSurvivors"`
	// Missing names what is lacking, when Mechanism is "".
	Missing string `json:"missing,omitempty"`
}

// fill derives the per-protection fields from the mechanism and the
// namespaces.
func (s *Status) fill() {
	ns := s.Namespaces != ""
	s.MountNamespace, s.HomeReadOnly, s.SecretsHidden, s.NoSurvivors = ns, ns, ns, ns
	// Without a namespace, Landlock still keeps the system temporary folders
	// out of the writable set; capabilities are dropped either way (an
	// ordinary user has none to drop).
	s.PrivateTmp = s.Mechanism == "landlock"
	s.CapsDropped = s.Mechanism == "landlock"
	s.StoresUnreadable = s.Mechanism != ""
}

// MinNetABI is the first Landlock ABI with TCP rules.
const MinNetABI = 4

// UnavailableError is returned when no sandbox applies on this machine.
type UnavailableError struct{ Missing string }

func (e *UnavailableError) Error() string { return "no sandbox can be applied: " + e.Missing }

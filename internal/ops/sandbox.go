package ops

import (
	"github.com/piagent/piagent/internal/nethosts"
	"github.com/piagent/piagent/internal/sandbox"
	"github.com/piagent/piagent/internal/serverrun"
)

// The sandbox's vocabulary, for the edge to word.
type (
	// SandboxState is what the sandbox enforces on this machine.
	SandboxState = sandbox.Status
	// SandboxProfile is what confines a command: the agent's, or a server's.
	SandboxProfile = sandbox.Profile
	// RunRecord is how a server's last confined run went.
	RunRecord = serverrun.Record
)

// MinNetABI is the Landlock ABI whose TCP rules the network's registries
// mode needs without a namespace.
const MinNetABI = sandbox.MinNetABI

// RegistryHosts are the package registries the network proxy reaches.
func RegistryHosts() []string { return nethosts.Registries }

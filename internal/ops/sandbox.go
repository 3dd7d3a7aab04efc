package ops

import (
	"strings"

	"github.com/piagent/piagent/internal/nethosts"
	"github.com/piagent/piagent/internal/sandbox"
	"github.com/piagent/piagent/internal/sandboxexec"
)

// The sandbox's vocabulary, for the edge to word.
type (
	// SandboxState is what the sandbox enforces on this machine.
	SandboxState = sandbox.Status
	// SandboxProfile is what confines a command: the agent's, or a server's.
	SandboxProfile = sandbox.Profile
)

// MinNetABI is the Landlock ABI whose TCP rules the network's registries
// mode needs without a namespace.
const MinNetABI = sandbox.MinNetABI

// RegistryHosts are the package registries the network proxy reaches.
func RegistryHosts() []string { return nethosts.Registries }

// Sandbox exec is its own verb (package sandboxexec, which piagent-sandbox
// also runs alone): confine this process to a profile, then run a command
// in its place. The edge reaches it here.
type (
	// ExecEnv is a command's environment as sandbox exec sees it.
	ExecEnv = sandboxexec.Env
	// ExecOptions are sandbox exec's flags.
	ExecOptions = sandboxexec.Options
	// ExecError is sandbox exec's refusal, with its exit status and hints.
	ExecError = sandboxexec.Error
)

// SandboxExec confines this process and runs argv in its place
// (sandboxexec.Run); it returns only when it could not.
func SandboxExec(env ExecEnv, o ExecOptions, argv []string) error {
	return sandboxexec.Run(env, o, argv)
}

// ParseExec reads sandbox exec's arguments after "exec" without the
// command tree (sandboxexec.Parse); false for anything it leaves to it.
func ParseExec(env ExecEnv, args []string) (ExecOptions, []string, bool) {
	return sandboxexec.Parse(env, args)
}

// ExecWords are what piagent says of a sandbox exec error, as
// piagent-sandbox says it (sandboxexec.Report), and the exit status.
func ExecWords(name string, err error) (code int, words string) {
	var b strings.Builder
	code = sandboxexec.Report(&b, name, err)
	return code, b.String()
}

// ProjectNotHome refuses a project that is the home folder or holds it
// (an *ExecError).
func ProjectNotHome(home, project string) error { return sandboxexec.ProjectNotHome(home, project) }

// TempDir is the temporary folder the sandbox keeps its private folders in.
func TempDir(environ []string) string {
	return sandboxexec.TempDir(sandboxexec.Env{Environ: environ})
}

// Executables are the running binary and piagent's other binaries beside it.
func Executables() []string { return sandboxexec.Executables() }

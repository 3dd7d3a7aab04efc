package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/piagent/piagent/internal/ops"
)

// Sandbox prints sandbox status: what confines the agent's commands here
// (st), and the profile they run in (p). who is the user it is for.
func Sandbox(w io.Writer, st ops.SandboxState, p ops.SandboxProfile, who string) {
	if st.Mechanism == "" {
		fmt.Fprintf(w, "sandbox: none on this machine: %s\n", st.Missing)
		if p.NetworkOff {
			fmt.Fprintln(w, "network: off in your policy, and nothing here can apply it: every command the agent runs is refused")
			return
		}
		if p.Registries {
			fmt.Fprintln(w, "network: through piagent's proxy, which nothing here can apply: with \"network\": \"registries\" in your policy every command the agent runs is refused; by default they get the host's network")
		}
		fmt.Fprintln(w, "commands the agent runs are checked by the command reader alone; set \"sandbox\": \"required\" in ~/.pi/piagent-policy.json to block them instead")
		return
	}
	fmt.Fprintf(w, "sandbox: %s ABI %d, for %s\n", st.Mechanism, st.ABI, who)
	ns := "none: " + st.NamespaceMissing
	switch st.Namespaces {
	case "root":
		ns = "yes (mount and PID namespaces: this process holds CAP_SYS_ADMIN)"
	case "user":
		ns = "yes (an unprivileged user namespace, with mount and PID namespaces)"
	}
	fmt.Fprintf(w, "  namespaces: %s\n", ns)
	holds := func(what string, ok bool, otherwise string) {
		if ok {
			fmt.Fprintf(w, "  holds: %s\n", what)
		} else {
			fmt.Fprintf(w, "  does not hold: %s (%s)\n", what, otherwise)
		}
	}
	holds("registered files inside the project (.git/hooks, .git/config, .pi) read-only", st.MountNamespace, "watched and blocked after a change, not locked")
	holds("every mount read-only but the writable folders: no chmod, chown or utimes of your files", st.HomeReadOnly, "Landlock refuses writes, not metadata changes")
	holds("your secret stores (~/.ssh, ~/.aws/credentials, ~/.kube, …) and Pi's auth.json unreadable, one created or replaced while a command runs too", st.StoresUnreadable, "readable")
	holds("the project's secrets (.env, *.pem, *.key, …) hidden", st.SecretsHidden, "readable")
	holds("/tmp and /var/tmp read-only, TMPDIR private", st.PrivateTmp, "")
	holds("every capability of the command dropped, no_new_privs (the init above it, which keeps its own, is not dumpable: the command cannot ptrace it)", st.CapsDropped, "")
	holds("Unix sockets (and datagram socket pairs), io_uring, set-ID modes, device nodes and terminal injection refused (seccomp)", st.Seccomp && p.NoUnixSockets, "")
	holds("signals and abstract sockets scoped to the sandbox", st.Scoped, "Landlock ABI 6 or later is needed")
	holds("every process a command starts ends with it", st.NoSurvivors, "survivors possible: a detached process can outlive the call")
	hosts := "the package registries (" + strings.Join(ops.RegistryHosts(), ", ") + ")"
	if len(p.AllowHosts) > 0 {
		hosts += " and " + strings.Join(p.AllowHosts, ", ")
	}
	switch {
	case p.Registries && st.Namespaces != "":
		fmt.Fprintln(w, "  network: registries: a network namespace with its own loopback; HTTP(S)_PROXY names piagent's proxy, outside, which reaches "+hosts+"; everything else gets 403, logged for doctor; a raw TCP connection past it is refused at once (ECONNREFUSED) and logged, UDP and name lookups fail at once (not logged); at most 256 connections open at once; your own HTTPS_PROXY/HTTP_PROXY, if set, is its way out (NO_PROXY respected); this machine's services on 127.0.0.1 and ::1, and its abstract sockets, out of reach unless granted by port; vsock refused")
	case p.Registries && st.ABI >= ops.MinNetABI:
		fmt.Fprintln(w, "  network: registries, without a namespace: Landlock lets TCP connect only to the proxy's port (random per command), which reaches "+hosts+" (any other port: EACCES, not logged); seccomp refuses UDP, SCTP and every family but IPv4, IPv6 and netlink")
		fmt.Fprintln(w, "  not covered without a namespace: Landlock filters connect by port, never by address: a service of this machine's, or a host, listening on the proxy's port (or a granted one) is reachable; the command cannot connect to its own listeners on loopback; abstract sockets are scoped only with Landlock ABI 6")
	case p.Registries:
		fmt.Fprintf(w, "  network: registries cannot be applied here (no namespace, Landlock ABI %d: TCP rules need ABI %d): with it named in your policy every command is refused; by default commands get the host's network, this machine's services included\n", st.ABI, ops.MinNetABI)
	case !p.NetworkOff:
		fmt.Fprintln(w, "  network: on: commands reach the network and this machine's own services on 127.0.0.1 and ::1 (a dev server, a database, a debugger port); \"network\": \"registries\" (the default) or \"off\" in ~/.pi/piagent-policy.json takes it away")
	case st.Namespaces != "":
		fmt.Fprintln(w, "  network: off: a network namespace with only its own loopback; a connection to any other address is refused at once (ECONNREFUSED, not logged); this machine's services and abstract sockets are out of reach; vsock refused")
	default:
		fmt.Fprintln(w, "  network: off: no namespace here, so seccomp refuses every socket, whatever its family (a command cannot listen on loopback either)")
	}
	if st.Namespaces == "" {
		fmt.Fprintln(w, "  set \"sandbox\": \"namespaces\" in ~/.pi/piagent-policy.json to refuse commands instead of running them without namespaces")
	}
	list := func(title string, ps []string) {
		if len(ps) == 0 {
			return
		}
		fmt.Fprintf(w, "%s:\n  %s\n", title, strings.Join(ps, "\n  "))
	}
	list("writable", p.Writable)
	list("read-only inside writable folders", p.ReadOnly)
	list("hidden", append(append([]string{}, p.Hidden...), p.HiddenDirs...))
	if p.Name == "agent" && len(p.Hidden)+len(p.HiddenDirs) > 0 {
		fmt.Fprintln(w, "  (a secret store a command of this project needs, kubectl's ~/.kube: piagent-mcp grant --agent --read PATH)")
	}
	list("not protected by the sandbox (the command could create them, or re-point a link)", p.Unprotected)
	list("environment", p.Env)
}

//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// MinABI is the oldest Landlock ABI the sandbox accepts: ABI 3 is the first
// that refuses truncating a read-only file.
const MinABI = 3

// Probe reports what this machine can enforce, namespaces included: it
// makes a user and mount namespace once to see whether one can mount (a
// few milliseconds; sandbox exec does not call it).
func Probe() Status {
	st := probeLandlock()
	if st.Mechanism == "" {
		return st
	}
	st.Namespaces, st.NamespaceMissing = probeNamespaces()
	st.fill()
	return st
}

// probeLandlock is Probe without namespaces.
func probeLandlock() Status {
	st := Status{Seccomp: true}
	abi, err := landlockABI()
	if faultHas(faultFromEnv(), "no-landlock") {
		abi, err = 0, unix.ENOSYS
	}
	if faultHas(faultFromEnv(), "abi3") && err == nil {
		abi = 3 // a kernel before Landlock's TCP rules
	}
	switch {
	case err != nil:
		st.Missing = "the kernel has no Landlock (landlock_create_ruleset: " + err.Error() + "); Linux 5.13 or later with lsm=landlock is needed"
		return st
	case abi < MinABI:
		st.ABI = abi
		st.Missing = fmt.Sprintf("the kernel's Landlock ABI is %d; ABI %d (Linux 6.2) or later is needed", abi, MinABI)
		return st
	}
	st.Mechanism, st.ABI, st.Scoped = "landlock", abi, abi >= 6
	return st
}

// rootMounts reports whether this process may make a mount namespace
// without a user namespace: it holds CAP_SYS_ADMIN.
func rootMounts() bool { return haveCap(unix.CAP_SYS_ADMIN) }

// ExecOptions adjusts Exec.
type ExecOptions struct {
	// NoNamespace is asked when no namespace can be made here, with the
	// cause: nil runs the command under Landlock and seccomp alone (after a
	// line on Warn naming the cause), an error refuses it.
	NoNamespace func(cause string) error
	// Warn receives that line (default: standard error).
	Warn io.Writer
	// NoProxy is asked when the profile's network goes through the proxy
	// and no namespace, nor Landlock's TCP rules, can confine it here, with
	// the cause: nil runs the command with the host's network (after a
	// line on Warn), an error refuses it. Nil refuses.
	NoProxy func(cause string) error
	// Upstream are the person's own proxy settings (HTTPS_PROXY=URL,
	// HTTP_PROXY, NO_PROXY, lower case too) through which piagent's
	// proxy reaches an allowed host; given to the proxy alone, never to
	// the command or its init.
	Upstream []string
}

// Exec confines argv (argv[0] looked up on PATH) by p and runs it with env.
// It returns only on failure, and then nothing was run; otherwise this
// process ends with the command's status (128+N for a signal N).
//
// Where a user and mount namespace can be made (root, or any user on a
// current kernel), the command runs beneath an init of its own in fresh
// user, mount and PID namespaces: every mount read-only but the writable
// folders, registered paths inside those read-only, secrets hidden, /proc,
// /dev/shm and the pseudo-terminals its own, every capability dropped, then
// Landlock and seccomp; when it ends, everything it started ends. Where none
// can be made, it runs under Landlock and seccomp alone, in place of this
// process.
func Exec(p Profile, argv, env []string) error { return ExecWith(p, argv, env, ExecOptions{}) }

// ExecWith is Exec with options.
func ExecWith(p Profile, argv, env []string, o ExecOptions) error {
	st := probeLandlock()
	if st.Mechanism == "" {
		return &UnavailableError{Missing: st.Missing}
	}
	if len(argv) == 0 {
		return errors.New("no command to run")
	}
	path, err := lookPath(argv[0], env)
	if err != nil {
		return err
	}
	stepsOn(faultFromEnv())
	stepStart()
	if err := preparePrivate(p); err != nil {
		return err
	}
	stepStop("private")
	// Nothing this process inherited beyond the standard streams reaches
	// the command (an fd open on ~/.bashrc in the caller, say).
	stepStart()
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fmt.Errorf("close inherited descriptors: %w", err)
	}
	stepStop("close")
	stepsFlush()
	env = mergeEnv(env, p.Env)
	cause, err := runInit(p, st, path, argv, env, o.Upstream)
	if cause == "" {
		return err
	}
	if p.Registries && st.ABI < MinNetABI {
		why := fmt.Sprintf("no namespace here (%s) and the kernel's Landlock ABI is %d: TCP rules need ABI %d (Linux 6.7)", cause, st.ABI, MinNetABI)
		if o.NoProxy == nil {
			return &NoProxyError{Cause: why}
		}
		if err := o.NoProxy(why); err != nil {
			return err
		}
		p.Registries = false
	}
	if o.NoNamespace != nil {
		if err := o.NoNamespace(cause); err != nil {
			return err
		}
	}
	w := o.Warn
	if w == nil {
		w = os.Stderr
	}
	fmt.Fprintf(w, "piagent: sandbox: no namespace here (%s); this command runs under Landlock and seccomp alone: files inside the project that piagent protects are watched, not locked; 'piagent sandbox status' says what holds and the fix\n", cause)
	if p.Registries {
		return execLandlockProxied(p, st, path, argv, env, o.Upstream)
	}
	return execLandlockOnly(p, st, path, argv, env)
}

// execLandlockOnly runs the command on a thread it confines: no
// namespace, so the protected paths inside writable folders are the
// guard's and the watch's to keep. The watch looks at the next call and
// when Pi exits; a process the command leaves behind (setsid nohup, a
// double fork) would write after both, where a PID namespace's end kills
// it. So this process stays, the subreaper of all the command starts,
// and kills what is left when the command ends (supervise).
func execLandlockOnly(p Profile, st Status, path string, argv, env []string) error {
	return supervise(path, argv, env, func() error {
		return confineThread(p, st.ABI, false, false, nil, faultFromEnv())
	}, func() {})
}

// supervise runs path as this process's child from a thread confine
// confines, forwards the terminal's signals to it, and, when it ends,
// runs done (the proxy's drain), kills every process it left behind
// (reparented here: this process is their subreaper; before this process
// exits, so before the call's answer and any later look), and exits with
// its status. It is not
// dumpable, so the command cannot open its /proc files; where Landlock
// scopes signals (ABI 6) the command cannot kill it either.
func supervise(path string, argv, env []string, confine func() error, done func()) error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("become the command's subreaper: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return err
	}
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	type started struct {
		pid int
		err error
	}
	startc, donec := make(chan started, 1), make(chan syscall.WaitStatus, 1)
	go func() {
		// This thread confines itself, starts the command and waits for
		// it; it is never unlocked, so it ends with this goroutine and no
		// other goroutine ever runs confined.
		runtime.LockOSThread()
		if err := confine(); err != nil {
			startc <- started{err: err}
			return
		}
		pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Dir: dir, Env: env, Files: []uintptr{0, 1, 2},
			Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}})
		startc <- started{pid, err}
		if err != nil {
			return
		}
		for {
			var ws syscall.WaitStatus
			_, err := syscall.Wait4(pid, &ws, 0, nil)
			if err == syscall.EINTR {
				continue
			}
			donec <- ws
			return
		}
	}()
	s := <-startc
	if s.err != nil {
		return s.err
	}
	for {
		select {
		case sig := <-sigs:
			syscall.Kill(s.pid, sig.(syscall.Signal))
		case ws := <-donec:
			done()
			killLeftBehind()
			os.Exit(exitCode(ws))
		}
	}
}

// killLeftBehind kills this subreaper's remaining children, and the
// children each leaves in turn, until none is left.
func killLeftBehind() {
	for range 1000 {
		var pids []int
		tasks, _ := os.ReadDir("/proc/self/task")
		for _, t := range tasks {
			b, _ := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
					pids = append(pids, pid)
				}
			}
		}
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			unix.Kill(pid, unix.SIGKILL)
		}
		for _, pid := range pids {
			var ws unix.WaitStatus
			for {
				if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
					break
				}
			}
		}
	}
}

// confineThread applies, to this thread and what it starts: every
// capability dropped, Landlock, then seccomp. netns says the thread is in a
// network namespace of its own; connect, outside one, lists the only TCP
// ports it may connect to (the proxy's).
func confineThread(p Profile, abi int, pts, netns bool, connect []int, fault string) error {
	stepStart()
	if !faultHas(fault, "keep-caps") {
		if err := dropCaps(); err != nil {
			return fmt.Errorf("drop capabilities: %w", err)
		}
	}
	stepStop("caps")
	stepStart()
	rules := rulesOf(p, pts)
	stepStop("rules")
	stepStart()
	if err := restrictLandlock(abi, rules, connect); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	stepStop("landlock")
	stepStart()
	if err := installSeccomp(fault, networkRules(p.NetworkOff, p.Registries, netns)); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	stepStop("seccomp")
	stepsFlush()
	return nil
}

// initSpec is what the outer process hands its init on descriptor 3, in
// the encoding of initspec_linux.go.
type initSpec struct {
	Profile Profile
	ABI     int
	Path    string
	Argv    []string
	Env     []string
	Dir     string
	Empty   string
	// Probe: make the namespaces and mounts, then end without a command.
	Probe bool
	Fault string
	// Listen are the addresses the init listens on inside the network
	// namespace, the proxy's first, then the machine's loopback ports the
	// person granted; it hands the listeners to this process on descriptor
	// 5, which serves them, and keeps none.
	Listen []string
}

// initEnv is the init's own environment (the command's comes in the spec):
// the Go runtime's settings for a process that waits and allocates little.
// One P: fewer threads are started, and no cgroup is read to size them; no
// memory profile, so that no allocation is sampled (a stack unwind through
// cold pages).
var initEnv = []string{"GOMAXPROCS=1", "GODEBUG=memprofilerate=0"}

// Init results on descriptor 4: "ok", or the reason nothing ran.
const (
	initOK      = "ok"
	initNoNS    = "nons:" // no namespace can mount here: the cause follows
	initFailure = "err:"  // anything else: nothing ran
)

// runInit starts the init in new namespaces and waits for it. It returns a
// non-empty cause when no namespace can be made here (nothing ran), an
// error when the init failed otherwise (nothing ran); when the command ran,
// it does not return: this process exits with the command's status.
func runInit(p Profile, st Status, path string, argv, env, upstream []string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	s := initSpec{Profile: p, ABI: st.ABI, Path: path, Argv: argv, Env: env, Dir: dir, Empty: emptyPath(p), Fault: faultFromEnv()}
	if p.Registries {
		port := proxyPortInNamespace(p)
		s.Env = mergeEnv(env, proxyEnv(port))
		s.Listen = listenAddrs(p, port)
	}
	return startInit(s, true, upstream)
}

// startInit starts an init with spec. With run, it waits for the command
// and exits with its status; without (a probe), it returns once the init
// has made its mounts.
func startInit(s initSpec, run bool, upstream []string) (string, error) {
	spec := s.encode()
	specR, specW, err := os.Pipe()
	if err != nil {
		return "", err
	}
	resR, resW, err := os.Pipe()
	if err != nil {
		return "", err
	}
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{initName(), InitArg},
		Env:        initEnv,
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		ExtraFiles: []*os.File{specR, resW},
		SysProcAttr: &syscall.SysProcAttr{
			Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID,
			// The init ends with this process, and with it every process
			// in its PID namespace.
			Pdeathsig: syscall.SIGKILL,
		},
	}
	if s.Profile.OwnNetwork() {
		// A network namespace: its own loopback, nothing else.
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNET
	}
	// The listeners come back on a socket pair, descriptor 5 in the init.
	var lisR *os.File
	if len(s.Listen) > 0 {
		// No proxy to serve them: nothing starts, and the error names the fix
		// (the init would only learn that the proxy did not start).
		if _, err := proxyBinary(); err != nil {
			return "", fmt.Errorf("the network proxy: %w", err)
		}
		pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return "", fmt.Errorf("the proxy's socket pair: %w", err)
		}
		lisR = os.NewFile(uintptr(pair[0]), "listeners")
		lisW := os.NewFile(uintptr(pair[1]), "listeners")
		defer lisW.Close()
		defer lisR.Close()
		cmd.ExtraFiles = append(cmd.ExtraFiles, lisW)
	}
	if !rootMounts() {
		uid, gid := os.Getuid(), os.Getgid()
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		cmd.SysProcAttr.GidMappingsEnableSetgroups = false
		// Capabilities in the new user namespace only, kept across the
		// init's execve to mount (and to bring the loopback up); the init
		// drops them before the command.
		cmd.SysProcAttr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP}
		if s.Profile.OwnNetwork() {
			// NET_RAW: the packet socket that sees raw connections refused
			cmd.SysProcAttr.AmbientCaps = append(cmd.SysProcAttr.AmbientCaps, unix.CAP_NET_ADMIN, unix.CAP_NET_RAW)
		}
	}
	// A profile that fits the pipe's buffer is written before the init
	// starts, so that it finds it waiting.
	prewritten := len(spec) <= 32<<10
	if prewritten {
		if _, err := specW.Write(spec); err != nil {
			return "", err
		}
		specW.Close()
	}
	// Pdeathsig follows the thread that started the child: keep it.
	runtime.LockOSThread()
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	if err := cmd.Start(); err != nil {
		specR.Close()
		resW.Close()
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EUSERS) || errors.Is(err, unix.EACCES) {
			return "cannot make a user namespace: " + err.Error() + userNSHint(), nil
		}
		return "", fmt.Errorf("start the sandbox's init: %w", err)
	}
	specR.Close()
	resW.Close()
	if lisR != nil {
		cmd.ExtraFiles[2].Close()
	}
	if !prewritten {
		go func() {
			specW.Write(spec)
			specW.Close()
		}()
	}
	// The init hands the listeners over before it starts the command, and
	// they are served before the command can use them (a connection waits
	// in the listener's queue until then). None: the init failed, and its
	// result says why.
	// The init waits for this process's word that it serves them before
	// it starts the command.
	served := false
	var proxy *lazyProxy
	if lisR != nil {
		var err error
		proxy, err = serveListeners(lisR, s.Profile, s.Listen, upstream)
		served = err == nil
		lisR.Close()
	}
	res, _ := io.ReadAll(io.LimitReader(resR, 4096))
	resR.Close()
	result := string(res)
	if result == initOK && lisR != nil && !served {
		// never expected: the init said it handed them over
		cmd.Process.Kill()
		result = initFailure + "the network proxy's listeners did not arrive"
	}
	if result != initOK {
		cmd.Wait()
		signal.Stop(sigs)
		switch {
		case strings.HasPrefix(result, initNoNS):
			return strings.TrimPrefix(result, initNoNS), nil
		case strings.HasPrefix(result, initFailure):
			return "", errors.New(strings.TrimPrefix(result, initFailure))
		}
		return "", fmt.Errorf("the sandbox's init ended before the command started (%v)", cmd.ProcessState)
	}
	if !run {
		signal.Stop(sigs)
		cmd.Wait()
		return "", nil
	}
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	cmd.Wait()
	proxy.finish()
	os.Exit(exitCode(cmd.ProcessState.Sys().(syscall.WaitStatus)))
	return "", nil
}

func exitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// userNSHint names why an unprivileged user namespace may be refused here.
func userNSHint() string {
	if b, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err == nil && strings.TrimSpace(string(b)) == "0" {
		return " (user.max_user_namespaces is 0: 'sudo sysctl user.max_user_namespaces=15000' allows them)"
	}
	if b, err := os.ReadFile("/proc/sys/kernel/unprivileged_userns_clone"); err == nil && strings.TrimSpace(string(b)) == "0" {
		return " (kernel.unprivileged_userns_clone is 0: 'sudo sysctl kernel.unprivileged_userns_clone=1' allows them)"
	}
	return ""
}

// appArmorRestricts reports Ubuntu's restriction of unprivileged user
// namespaces (23.10 and later): the namespace is made, but without the
// capabilities to mount, unless an AppArmor profile grants userns.
func appArmorRestricts() bool {
	b, err := os.ReadFile("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
	return err == nil && strings.TrimSpace(string(b)) == "1"
}

// Any binary that links this package serves as a sandbox's init (piagent,
// and the tests' own binaries, whose Probe starts one): before any other
// package of the program initialises, so the init starts little.
func init() {
	if len(os.Args) == 2 && os.Args[1] == InitArg {
		os.Exit(Init())
	}
}

// Init is piagent run as a sandbox's init (argv[1] == InitArg): PID 1 of
// fresh namespaces. It makes the mounts, confines its own thread, starts the
// command from it, passes signals on, and ends with the command's status;
// every process left in the namespace ends with it.
func Init() int {
	runtime.LockOSThread() // never unlocked: the command is forked from this thread

	// Only the result pipe is to stay open, and not in the command.
	unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	res := os.NewFile(4, "result")
	fail := func(prefix string, err error) int {
		res.WriteString(prefix + err.Error())
		res.Close()
		return 125
	}
	specf := os.NewFile(3, "spec")
	b, err := io.ReadAll(io.LimitReader(specf, 64<<20))
	specf.Close()
	if err != nil {
		return fail(initFailure, fmt.Errorf("read the sandbox's profile: %w", err))
	}
	spec, err := decodeInitSpec(b)
	if err != nil {
		return fail(initFailure, fmt.Errorf("read the sandbox's profile: %w", err))
	}
	// Only the thread that starts the command confines itself; the init's
	// other threads keep what it held (root's capabilities, for root).
	// Not dumpable: the command, same user, same Landlock domain as this
	// thread and without CAP_SYS_PTRACE, can neither ptrace the init nor
	// open its /proc files, so it cannot make another thread run its code.
	stepsOn(spec.Fault)
	stepStart()
	if !faultHas(spec.Fault, "dumpable") {
		if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
			return fail(initFailure, fmt.Errorf("make the init non-dumpable: %w", err))
		}
	}
	stepStop("dumpable")
	pts, err := mountAll(spec.Profile, spec.Empty, spec.Fault)
	if err != nil {
		var nm *noMountError
		if errors.As(err, &nm) {
			return fail(initNoNS, err)
		}
		return fail(initFailure, fmt.Errorf("mount namespace: %w", err))
	}
	if spec.Profile.OwnNetwork() {
		if err := loopbackUp(); err != nil {
			return fail(initFailure, fmt.Errorf("the network namespace's loopback: %w", err))
		}
		// Not fatal: without it a connection outside finds no route
		// (ENETUNREACH) instead of a refusal; nothing leaves either way.
		refuseEverywhere()
	}
	if len(spec.Listen) > 0 {
		if err := handListeners(5, spec.Listen, true); err != nil {
			return fail(initFailure, fmt.Errorf("the proxy's listener in the network namespace: %w", err))
		}
	}
	if spec.Probe {
		res.WriteString(initOK)
		res.Close()
		return 0
	}
	if err := unix.Chdir(spec.Dir); err != nil {
		return fail(initFailure, err)
	}
	if err := confineThread(spec.Profile, spec.ABI, pts, spec.Profile.OwnNetwork(), nil, spec.Fault); err != nil {
		return fail(initFailure, err)
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	pid, err := syscall.ForkExec(spec.Path, spec.Argv, &syscall.ProcAttr{
		Dir:   spec.Dir,
		Env:   spec.Env,
		Files: []uintptr{0, 1, 2},
		// A session of its own: no controlling terminal to type into.
		Sys: &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return fail(initFailure, fmt.Errorf("%s: %w", spec.Path, err))
	}
	res.WriteString(initOK)
	res.Close()
	go func() {
		for s := range sigs {
			unix.Kill(-pid, s.(syscall.Signal))
		}
	}()
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 125
		}
		if got == pid {
			return exitCode(ws)
		}
	}
}

// noMountError is a namespace that was made but cannot mount (an AppArmor
// restriction, a container's seccomp filter): the cause names the fix.
type noMountError struct{ err error }

func (e *noMountError) Error() string {
	msg := "the user namespace cannot mount: " + e.err.Error()
	if appArmorRestricts() {
		msg += " (AppArmor restricts unprivileged user namespaces here: 'piagent setup --apparmor' prints the profile that allows piagent's)"
	}
	return msg
}

// mountAll makes the init's mounts. It reports whether the command has a
// private pseudo-terminal instance.
func mountAll(p Profile, empty, fault string) (bool, error) {
	stepStart()
	if err := faultMount(fault); err != nil {
		return false, &noMountError{err}
	}
	// Nothing mounted here reaches the rest of the machine, and nothing the
	// machine mounts later (a login's /run/user/UID, a USB stick, an
	// automount) arrives here: it would be writable, past the read-only
	// setting made below.
	if err := unix.Mount("", "/", "", unix.MS_PRIVATE|unix.MS_REC, ""); err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return false, &noMountError{err}
		}
		return false, fmt.Errorf("make / a private mount: %w", err)
	}
	// A /proc of this PID namespace: no other process's environment or
	// memory is in view.
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return false, fmt.Errorf("mount /proc: %w", err)
	}
	// The writable folders become mounts of their own, so that they stay
	// writable when everything else is made read-only.
	writable := append(existing(p.Writable), p.Dirs()...)
	for _, d := range writable {
		if err := bindAt(d, d); err != nil {
			return false, err
		}
	}
	// Read-only, and no device node anywhere opens its device: root's
	// command would otherwise read a raw disk (and the secrets hidden
	// above with it), the console or the input devices. The few devices
	// every program expects come back below.
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NODEV}); err != nil {
		return false, fmt.Errorf("make every mount read-only: %w", err)
	}
	for _, d := range commonDevices {
		var st unix.Stat_t
		if unix.Lstat(d, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
			continue
		}
		if err := bindAt(d, d); err != nil {
			return false, err
		}
		if err := setattrAt(d, 0, unix.MOUNT_ATTR_NOSUID, unix.MOUNT_ATTR_NODEV); err != nil {
			return false, err
		}
	}
	for _, d := range writable {
		if err := setattrAt(d, 0, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, unix.MOUNT_ATTR_RDONLY); err != nil {
			return false, err
		}
	}
	// /dev/shm a tmpfs of its own.
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size=256m"); err != nil {
			return false, fmt.Errorf("mount /dev/shm: %w", err)
		}
	}
	// Pins first, outermost first, so the read-only mounts sit inside them.
	for _, d := range p.Pinned {
		if err := bindAt(d, d); err != nil {
			return false, err
		}
	}
	for _, f := range p.ReadOnly {
		if err := roBind(f, f); err != nil {
			return false, err
		}
	}
	for _, f := range p.Hidden {
		// an empty read-only file, not /dev/null: a write to it must fail,
		// not vanish
		if err := roBind(empty, f); err != nil {
			return false, err
		}
	}
	for _, d := range p.HiddenDirs {
		fd, err := openNoFollow(d, unix.O_DIRECTORY)
		if err != nil {
			return false, err
		}
		err = unix.Mount("tmpfs", fdPath(fd), "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, "size=4k,mode=0500")
		unix.Close(fd)
		if err != nil {
			return false, fmt.Errorf("hide %s: %w", d, err)
		}
	}
	stepStop("mounts")
	stepStart()
	pts := privatePTS()
	stepStop("pts")
	return pts, nil
}

// commonDevices are the character devices a confined command may open:
// everything else under a nodev mount refuses to.
var commonDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// privatePTS mounts a pseudo-terminal instance of the namespace's own over
// /dev/pts, and its ptmx over /dev/ptmx: the person's terminals are out of
// sight, and the command can still make new ones.
func privatePTS() bool {
	if unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620") != nil {
		return false
	}
	fi, err := os.Lstat("/dev/ptmx")
	if err != nil {
		return false
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return true // a link to pts/ptmx, the new instance's
	}
	return unix.Mount("/dev/pts/ptmx", "/dev/ptmx", "", unix.MS_BIND, "") == nil
}

// fdPath names what descriptor fd refers to, for mount(2): the mount lands
// on that very file, whatever its path leads to by now.
func fdPath(fd int) string { return fmt.Sprintf("/proc/self/fd/%d", fd) }

// bindAt bind-mounts src over dst, both opened without following links.
func bindAt(src, dst string) error {
	sfd, err := openNoFollow(src, 0)
	if err != nil {
		return err
	}
	defer unix.Close(sfd)
	dfd, err := openNoFollow(dst, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	if err := unix.Mount(fdPath(sfd), fdPath(dfd), "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", dst, err)
	}
	return nil
}

// roBind bind-mounts src over dst read-only.
func roBind(src, dst string) error {
	if err := bindAt(src, dst); err != nil {
		return err
	}
	return setattrAt(dst, unix.AT_RECURSIVE, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, 0)
}

// setattrAt changes the attributes of the mount at path.
func setattrAt(path string, flags int, set, clr uint64) error {
	fd, err := openNoFollow(path, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.MountSetattr(fd, "", uint(flags)|unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: set, Attr_clr: clr}); err != nil {
		return fmt.Errorf("mount attributes of %s: %w", path, err)
	}
	return nil
}

// emptyPath is the empty, read-only regular file bound over each hidden
// file: in the profile's private base folder, which no confined command can
// write (only the private folders beneath it are writable).
func emptyPath(p Profile) string {
	dirs := p.Dirs()
	if len(dirs) == 0 {
		return "/dev/null"
	}
	return filepath.Join(filepath.Dir(dirs[0]), ".hidden-empty")
}

// loopbackUp brings up lo in this network namespace (it starts down), so
// that a command's own servers and tests can listen on 127.0.0.1 and ::1.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// initName is the init's argv[0]: this binary's name (piagent or
// piagent-sandbox), which its /proc/1/cmdline shows inside the sandbox (its
// exe link is not readable there: the init is not dumpable).
func initName() string {
	if len(os.Args) > 0 && os.Args[0] != "" {
		return filepath.Base(os.Args[0])
	}
	return "piagent"
}

//go:build linux && !sandboxfault

package sandbox

// Fault injection exists only in a build with the sandboxfault tag (the
// tests' own binary): a release build has no way to weaken its sandbox.

func faultFromEnv() string { return "" }

func faultMount(string) error { return nil }

func faultHas(string, string) bool { return false }

func faultDial() map[string]string { return nil }

func stepsOn(string) {}

func stepStart() {}

func stepStop(string) {}

func stepsFlush() {}

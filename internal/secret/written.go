package secret

import (
	"strconv"
	"strings"
)

// codeLoading are environment variables that make the process they are set
// for load or run code other than its command: a person approving a
// definition must see them whatever their source.
var codeLoading = map[string]bool{
	"NODE_OPTIONS": true, "NODE_PATH": true, "LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true,
	"PYTHONPATH": true, "PYTHONSTARTUP": true, "PYTHONHOME": true, "BASH_ENV": true, "ENV": true,
	"PERL5OPT": true, "PERL5LIB": true, "PERLLIB": true, "RUBYOPT": true, "RUBYLIB": true,
	"JAVA_TOOL_OPTIONS": true, "_JAVA_OPTIONS": true, "JDK_JAVA_OPTIONS": true,
	"GIT_SSH": true, "GIT_SSH_COMMAND": true, "GIT_EXEC_PATH": true, "GIT_ASKPASS": true, "GIT_EDITOR": true,
	"GIT_PAGER": true, "GIT_EXTERNAL_DIFF": true, "GIT_PROXY_COMMAND": true, "GIT_TEMPLATE_DIR": true,
	"GIT_CONFIG": true, "GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true, "GIT_CONFIG_PARAMETERS": true,
	"SSH_ASKPASS": true, "EDITOR": true, "VISUAL": true, "PAGER": true,
}

// CodeLoading reports whether the environment variable name makes a
// process load or run code: NODE_OPTIONS, LD_PRELOAD, DYLD_*, PYTHONPATH,
// GIT_SSH_COMMAND, GIT_CONFIG_* and the like. PATH is not one by itself; it
// is when it names a folder inside the project, which the caller knows.
func CodeLoading(name string) bool {
	return codeLoading[name] || strings.HasPrefix(name, "DYLD_") || strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_")
}

// MaskWritten is Mask for an entry a repository wrote: the person must see
// what the repository commits, so values are kept as written, except those
// that look like a secret (the detector add uses), which are masked and
// returned in secrets as "env.NAME", "headers.NAME", "args[2]", ….
func MaskWritten(entry map[string]any) (out map[string]any, secrets []string) {
	if entry == nil {
		return nil, nil
	}
	var walk func(path string, v any) any
	walk = func(path string, v any) any {
		switch x := v.(type) {
		case map[string]any:
			c := make(map[string]any, len(x))
			for k, vv := range x {
				p := k
				if path != "" {
					p = path + "." + k
				}
				c[k] = walk(p, vv)
			}
			return c
		case []any:
			c := make([]any, len(x))
			for i, vv := range x {
				c[i] = walk(path+"["+strconv.Itoa(i)+"]", vv)
			}
			return c
		case string:
			if x == "" || IsReference(x) || referencedOnly(x) {
				return x
			}
			if _, s := SecretValue(x); s {
				secrets = append(secrets, path)
				return Masked
			}
			if m := urlPasswordIn(x); m != nil {
				secrets = append(secrets, path)
				return x[:m[3]] + Masked + x[m[5]:]
			}
			return x
		}
		return v
	}
	out, _ = walk("", entry).(map[string]any)
	return out, secrets
}

// ShowCodeLoading puts back, in a masked entry, the value of every
// code-loading environment variable from the entry as written, unless the
// value itself looks like a secret.
func ShowCodeLoading(masked, written map[string]any) {
	for _, field := range []string{"env"} {
		src, _ := written[field].(map[string]any)
		dst, _ := masked[field].(map[string]any)
		for k, v := range src {
			s, ok := v.(string)
			if !ok || dst == nil || !CodeLoading(k) {
				continue
			}
			if _, secret := SecretValue(s); !secret {
				dst[k] = s
			}
		}
	}
}

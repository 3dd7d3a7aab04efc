package shell

// Helpers only the tests use.

// Reads returns every path the command line may read: input redirections,
// the operands of cat-like programs, grep/rg files after the pattern (and
// -f files), sed/awk/jq files after the script, source and `.`, cp/mv/ln
// sources, tar and zip inputs, rsync/scp sources, dd if=, curl uploads
// (-d @file, -F x=@file, -T, -K, file:// URLs), wget --post-file and -i,
// interpreter scripts and the string literals of interpreter code, git
// show/diff/log `REV:path` operands, and the operands of any program not
// listed in the package documentation. A glob is returned with Dynamic
// set, so the caller can check whether it can reach a protected path.
func Reads(a *Analysis) []Word {
	return collect(a, func(s *sink) []Word { return s.reads })
}

package shell

import (
	"cmp"
	"path"
	"slices"
	"strings"
)

// Writes returns every path the command line may write: output
// redirections, the files of tee, cp/mv/install/ln/rsync/scp destinations
// (and mv sources, which disappear), sed -i and perl -i files, dd of=,
// truncate, touch, mkdir, rm, rmdir, unlink, shred, chmod/chown/chgrp
// targets, curl -o/-O/--dump-header/--cookie-jar, wget's output (-O, or
// the URL's base name), tar and unzip extraction (a Dynamic `DIR/**`),
// git checkout/restore/rm/mv/apply operands, sort -o, uniq's output file,
// the string literals of interpreter code (python -c, node -e, …), and
// the operands of any program not listed in the package documentation
// (an unknown program may write any path it is given).
func Writes(a *Analysis) []Word {
	return collect(a, func(s *sink) []Word { return s.writes })
}

// Trees returns the paths beneath which the command may replace, rename or
// remove anything, the path itself included: rm and rmdir operands, mv
// sources and destinations, the destination of a recursive cp or install,
// rsync's destination, unzip's -d folder and tar's -C folder when
// extracting, and the path a copy, move or link into a folder creates
// (DEST/<base of the source>). A folder here that holds a guarded file
// changes that file. Trees adds to Writes; it repeats none of it.
func Trees(a *Analysis) []Word {
	return collect(a, func(s *sink) []Word { return s.trees })
}

// Links returns the targets of the links ln and link create: a link to a
// guarded file lets a later write reach it under another name.
func Links(a *Analysis) []Word {
	return collect(a, func(s *sink) []Word { return s.links })
}

// ReadsAt and WritesAt are Reads and Writes of the command at index i.
func (a *Analysis) ReadsAt(i int) []Word {
	a.byCommand()
	return a.readsAt[i]
}

// WritesAt: see ReadsAt.
func (a *Analysis) WritesAt(i int) []Word {
	a.byCommand()
	return a.writesAt[i]
}

// byCommand works out ReadsAt and WritesAt of every command once per
// analysis: a line an agent sends again is judged again from them. They
// share one backing array, and each is cut with its capacity at its end,
// so that a caller's append copies and never reaches the next one.
func (a *Analysis) byCommand() {
	a.atOnce.Do(func() {
		n := len(a.Commands)
		at := make([][]Word, 2*n)
		a.readsAt, a.writesAt = at[:n:n], at[n:]
		// ends[2i] ends command i's reads, ends[2i+1] its writes
		var small [16]int
		ends := small[:]
		if 2*n > len(small) {
			ends = make([]int, 2*n)
		}
		// room for every word from every folder: deduplication only drops
		sinks, room := a.sinks(), 0
		for i := range a.Commands {
			room += (len(sinks[i].reads) + len(sinks[i].writes)) * max(1, len(a.Commands[i].Dirs))
		}
		all := make([]Word, 0, room)
		for i := range a.Commands {
			all = collectAt(all, a, i, i+1, func(s *sink) []Word { return s.reads })
			ends[2*i] = len(all)
			all = collectAt(all, a, i, i+1, func(s *sink) []Word { return s.writes })
			ends[2*i+1] = len(all)
		}
		start := 0
		for i := range a.Commands {
			r, w := ends[2*i], ends[2*i+1]
			a.readsAt[i], a.writesAt[i] = all[start:r:r], all[r:w:w]
			start = w
		}
	})
}

// sinks is every command's reads, writes, trees and links, worked out once
// per analysis (the guard and the policy each ask for several).
func (a *Analysis) sinks() []sink {
	a.ioOnce.Do(func() {
		a.io = make([]sink, len(a.Commands))
		for i := range a.Commands {
			commandIO(&a.Commands[i], &a.io[i])
		}
	})
	return a.io
}

func collect(a *Analysis, pick func(*sink) []Word) []Word {
	if a == nil {
		return nil
	}
	return collectAt(nil, a, 0, len(a.Commands), pick)
}

// collectAt appends to dst the words pick gives for commands from to to,
// each once (dst's own words are not compared).
func collectAt(dst []Word, a *Analysis, from, to int, pick func(*sink) []Word) []Word {
	sinks := a.sinks()
	base := len(dst)
	out := dst
	var seen map[Word]bool // past a few words; a scan is cheaper before
	add := func(w Word) {
		switch {
		case seen != nil:
			if seen[w] {
				return
			}
			seen[w] = true
		case slices.Contains(out[base:], w):
			return
		case len(out)-base == 16:
			seen = make(map[Word]bool, 32)
			for _, o := range out[base:] {
				seen[o] = true
			}
			seen[w] = true
		}
		out = append(out, w)
	}
	for i := from; i < to; i++ {
		for _, w := range pick(&sinks[i]) {
			if w.Lit == "" && !w.Dynamic {
				continue
			}
			inDirs(w, a.Commands[i].Dirs, add)
		}
	}
	return out
}

// inDirs is a path word as the command sees it from each folder it may
// run in (Command.Dirs): relative paths are joined to the folder; in a
// folder not known, the word can be anything ending in it.
func inDirs(w Word, dirs []string, out func(Word)) {
	if len(dirs) == 0 || w.Lit == "" || w.Expands || strings.HasPrefix(w.Lit, "/") || strings.HasPrefix(w.Lit, "~") || strings.HasPrefix(w.Lit, "$") {
		out(w)
		return
	}
	for _, d := range dirs {
		switch d {
		case "":
			out(w)
		case "?":
			p := w.Pattern
			if !w.Dynamic {
				p = escapeLit(w.Lit)
			}
			out(Word{Lit: "?/" + w.Lit, Dynamic: true, Expands: true, Pattern: "**/" + p})
		default:
			j := w
			j.Lit = joinDir(d, w.Lit)
			if hasDotDot(w.Lit) && d != "?" {
				// The kernel steps up from where a link in d leads:
				// keep the path as written for the policy to resolve.
				j.Lit = strings.TrimSuffix(d, "/") + "/" + w.Lit
			}
			if w.Dynamic {
				j.Pattern = escapeLit(d) + "/" + w.Pattern
			}
			if w.Under != "" && !strings.HasPrefix(w.Under, "/") && !strings.HasPrefix(w.Under, "~") {
				j.Under = joinDir(d, w.Under)
			}
			out(j)
		}
	}
}

type sink struct {
	reads, writes, trees, links []Word
}

func (s *sink) read(ws ...Word)  { s.reads = append(s.reads, ws...) }
func (s *sink) write(ws ...Word) { s.writes = append(s.writes, ws...) }
func (s *sink) tree(ws ...Word)  { s.trees = append(s.trees, ws...) }
func (s *sink) both(ws ...Word)  { s.read(ws...); s.write(ws...) }

// trimWord is the part of w after a literal prefix (of=, @, --output=).
func trimWord(w Word, prefix string) Word {
	out := Word{Lit: strings.TrimPrefix(w.Lit, prefix)}
	if w.Dynamic {
		out.Dynamic, out.Expands = true, w.Expands
		out.Pattern = "**"
		if strings.HasPrefix(w.Pattern, prefix) {
			out.Pattern = w.Pattern[len(prefix):]
		}
	}
	return out
}

type optVal struct {
	name string
	val  Word
}

// parseGNU splits args into options and operands, GNU style: options may
// follow operands, "--" ends them.
func parseGNU(args []Word, o opts) ([]optVal, []Word) {
	var flags []optVal
	var pos []Word
	for i := 0; i < len(args); {
		a := args[i]
		if !a.Dynamic && a.Lit == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if a.Dynamic || len(a.Lit) < 2 || a.Lit[0] != '-' {
			pos = append(pos, a)
			i++
			continue
		}
		// one option word, plus the value it may take from the next word
		end := i + 1
		if o.needsNext(a.Lit) && end < len(args) {
			end++
		}
		o.each(args[i:end], func(name string, v Word) { flags = append(flags, optVal{name, v}) })
		i = end
	}
	return flags, pos
}

func has(flags []optVal, names ...string) bool {
	for _, f := range flags {
		for _, n := range names {
			if f.name == n {
				return true
			}
		}
	}
	return false
}

func values(flags []optVal, names ...string) []Word {
	var out []Word
	for _, f := range flags {
		for _, n := range names {
			if f.name == n {
				out = append(out, f.val)
			}
		}
	}
	return out
}

// noIO programs read or write no file named by their operands (listing
// programs print names, not content).
var noIO = map[string]bool{
	"echo": true, "printf": true, "true": true, "false": true, ":": true, "cd": true, "pushd": true,
	"popd": true, "pwd": true, "exit": true, "return": true, "export": true, "unset": true, "set": true,
	"shift": true, "sleep": true, "date": true, "whoami": true, "id": true, "uname": true, "kill": true,
	"wait": true, "jobs": true, "fg": true, "bg": true, "test": true, "[": true, "which": true,
	"type": true, "hash": true, "alias": true, "unalias": true, "read": true, "break": true,
	"continue": true, "trap": true, "shopt": true, "ulimit": true, "umask": true, "history": true,
	"seq": true, "yes": true, "printenv": true, "env": true, "local": true, "declare": true,
	"readonly": true, "let": true, "getopts": true, "command": true, "builtin": true, "hostname": true,
	"nproc": true, "uptime": true, "clear": true, "tput": true, "tty": true, "stty": true, "ps": true,
	"top": true, "df": true, "free": true, "sync": true, "arch": true, "basename": true, "dirname": true,
	"ls": true, "stat": true, "file": true, "du": true, "tree": true, "realpath": true, "readlink": true,
	"ssh": true, "eval": true, "exec": true, "watch": true, "time": true, "nohup": true,
	"pgrep": true, "pkill": true, "killall": true, "jq-version": true, "tmux": true, "disown": true,
	"logname": true, "groups": true, "users": true, "who": true, "w": true, "cal": true, "bc": true,
	"expr": true, "lsof": true, "netstat": true, "ss": true, "ping": true, "dig": true, "nslookup": true,
	"host": true, "man": true, "info": true, "help": true, "wc-version": true,
}

// catLike programs read every operand; the map holds their short options
// that take a value.
var catLike = map[string]string{
	"cat": "", "tac": "s", "nl": "bdfhilnsvw", "less": "bhjkoOpPtTxyz", "more": "n", "most": "",
	"head": "nc", "tail": "ncs", "bat": "lLmHrp", "batcat": "lLmHrp", "view": "", "strings": "ntTe",
	"xxd": "cglos", "od": "AjNtw", "hexdump": "efns", "hd": "efns", "base64": "w", "base32": "w",
	"basenc": "w", "md5sum": "", "sha1sum": "", "sha224sum": "", "sha256sum": "", "sha384sum": "",
	"sha512sum": "", "shasum": "a", "cksum": "a", "b2sum": "l", "sum": "", "wc": "", "sort": "kotST",
	"cut": "bcdf", "paste": "d", "join": "12jeot", "comm": "", "diff": "CUIxXLFD", "diff3": "L",
	"sdiff": "ow", "cmp": "in", "fold": "w", "fmt": "wgp", "rev": "", "column": "csoONHRWEdl", "iconv": "fto",
	"expand": "t", "unexpand": "t", "zcat": "", "bzcat": "", "xzcat": "", "zless": "", "zmore": "",
	"pr": "hlwoNs", "split": "lbnCa", "csplit": "fbn", "tr": "", "uniq": "fsw", "look": "t",
	"vis": "", "unvis": "", "hexyl": "nsl", "jless": "", "fx": "", "glow": "sw", "gpg": "ouor",
}

var grepLike = map[string]opts{
	"grep":  {short: "efmABCdD", long: " regexp file max-count after-context before-context context devices directories exclude include exclude-from exclude-dir label binary-files color colour "},
	"egrep": {short: "efmABCdD", long: " regexp file max-count after-context before-context context exclude include exclude-from exclude-dir label "},
	"fgrep": {short: "efmABCdD", long: " regexp file max-count after-context before-context context exclude include exclude-from exclude-dir label "},
	"zgrep": {short: "efmABCdD", long: " regexp file max-count after-context before-context context "},
	"rg":    {short: "efgtTmABCjMEr", long: " regexp file glob iglob type type-not type-add max-count after-context before-context context threads max-columns encoding replace ignore-file pre sort sortr max-depth max-filesize path-separator colors "},
	"ag":    {short: "efgGmABC", long: " file-search-regex ignore max-count after before context depth "},
	"ack":   {short: "gmABC", long: " type match ignore-dir max-count after-context before-context context "},
	"ugrep": {short: "efmABCdDgtOM", long: " regexp file max-count after-context before-context context glob include exclude "},
}

var interpreters = map[string]opts{
	"python": {short: "cmWXQ"}, "python2": {short: "cmWXQ"}, "python3": {short: "cmWXQ"}, "pypy": {short: "cmWXQ"}, "pypy3": {short: "cmWXQ"},
	"node": {short: "eprC", long: " eval print require import loader experimental-loader input-type conditions "}, "nodejs": {short: "eprC", long: " eval print require "},
	"bun": {short: "epr", long: " eval print preload "}, "deno": {}, "perl": {short: "eEIMmlxC"}, "ruby": {short: "eIrCE"},
	"php": {short: "rfcdBRFE"}, "lua": {short: "el"}, "luajit": {short: "el"}, "osascript": {short: "el"},
	"rscript": {short: "e"}, "tsx": {short: "ep", long: " eval print "}, "ts-node": {short: "epr", long: " eval print require "},
}

// codeArgs returns the code strings an interpreter command runs
// (python -c, node -e, perl -e, awk's program, …).
func codeArgs(c *Command) []Word {
	if len(c.Argv) == 0 || c.Argv[0].Dynamic {
		return nil
	}
	name := progName(c.Argv[0].Lit)
	args := c.Argv[1:]
	switch name {
	case "awk", "gawk", "mawk", "nawk", "busybox-awk":
		flags, pos := parseGNU(args, opts{short: "fvFil", long: " file assign field-separator source include load "})
		code := values(flags, "--source")
		if !has(flags, "-f", "--file") && len(pos) > 0 {
			code = append(code, pos[0])
		}
		return code
	case "deno":
		if len(args) > 1 && args[0].Lit == "eval" {
			return args[1:2]
		}
		return nil
	}
	o, ok := interpreters[name]
	if !ok {
		return nil
	}
	var code []Word
	o.each(args, func(n string, v Word) {
		switch n {
		case "-c":
			if strings.HasPrefix(name, "py") {
				code = append(code, v)
			}
		case "-e", "-E", "-p", "--eval", "--print", "-r":
			if n == "-r" && name != "php" {
				return
			}
			if n == "-p" && name == "perl" {
				return
			}
			if n == "-E" && name != "perl" {
				return
			}
			code = append(code, v)
		}
	})
	return code
}

// codeLiterals returns the quoted string literals of interpreter code and
// its path-like bare tokens: the paths that code may touch.
func codeLiterals(code Word) []Word {
	s := code.Lit
	var out []Word
	for i := 0; i < len(s); i++ {
		q := s[i]
		if q != '\'' && q != '"' && q != '`' {
			continue
		}
		j := i + 1
		for j < len(s) && s[j] != q {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		if j > len(s) {
			j = len(s)
		}
		lit := s[i+1 : j]
		if lit != "" && len(lit) < 4096 && !strings.ContainsAny(lit, "\n") {
			w := Word{Lit: lit}
			if code.Dynamic {
				w = Word{Lit: lit, Dynamic: true, Expands: code.Expands, Pattern: "**"}
			}
			out = append(out, w)
		}
		i = j
	}
	return out
}

func commandIO(c *Command, s *sink) {
	redirectIO(c.Redirects, s)
	if len(c.Argv) == 0 {
		return
	}
	if c.Argv[0].Dynamic {
		unknownIO(c.Argv[1:], s)
		return
	}
	name := progName(c.Argv[0].Lit)
	args := c.Argv[1:]
	settingsIO(name, args, s)
	if spec, ok := catLike[name]; ok {
		catIO(name, spec, args, s)
		return
	}
	if o, ok := grepLike[name]; ok {
		grepIO(name, o, args, s)
		return
	}
	for _, code := range codeArgs(c) {
		s.both(codeLiterals(code)...)
	}
	if name == "go" {
		goEnvIO(args, s)
	}
	if programIO(name, args, s) {
		return
	}
	_, interpreter := interpreters[name]
	switch {
	case noIO[name]:
	case interpreter:
		interpreterIO(c, name, args, s)
	case shells[name]:
		_, pos := parseGNU(args, opts{plus: true, long: " rcfile init-file "})
		if len(pos) > 0 {
			s.read(pos[0])
			unknownIO(pos[1:], s)
		}
	default:
		unknownIO(args, s)
	}
}

// programIO reads the operands of the programs whose reads and writes are
// known, each by its own rule: one hop from a program's name to what it
// touches (cat-like and grep-like programs are tables of their own). It
// reports false for any other program.
func programIO(name string, args []Word, s *sink) bool {
	switch name {
	case "sed", "gsed":
		sedIO(args, s)
	case "awk", "gawk", "mawk", "nawk":
		awkIO(args, s)
	case "jq", "gojq", "jaq", "yq":
		jqIO(name, args, s)
	case "source", ".":
		sourceIO(args, s)
	case "cp", "mv", "install", "ln", "link":
		copyIO(name, args, s)
	case "rsync", "scp":
		rsyncIO(args, s)
	case "dd":
		ddIO(args, s)
	case "tee":
		teeIO(args, s)
	case "truncate", "touch", "mkdir", "rmdir", "rm", "unlink", "shred", "srm", "trash", "trash-put", "mkfifo", "mknod":
		fileOpIO(name, args, s)
	case "chmod", "chown", "chgrp":
		permIO(name, args, s)
	case "curl":
		curlIO(args, s)
	case "wget":
		wgetIO(args, s)
	case "tar", "bsdtar", "gtar":
		tarIO(args, s)
	case "zip":
		zipIO(args, s)
	case "unzip":
		unzipIO(args, s)
	case "git":
		gitIO(args, s)
	case "find":
		findIO(args, s)
	case "openssl":
		opensslIO(args, s)
	case "patch":
		patchIO(args, s)
	default:
		return false
	}
	return true
}

// redirectIO reads a command's redirections.
func redirectIO(redirects []Redirect, s *sink) {
	for _, r := range redirects {
		switch r.Op {
		case ">", ">>", "&>", "&>>", ">|":
			s.write(r.Target)
		case "<>":
			s.both(r.Target)
		case "<":
			s.read(r.Target)
		case ">&":
			if !isFD(r.Target) {
				s.write(r.Target)
			}
		case "<&":
			if !isFD(r.Target) {
				s.read(r.Target)
			}
		}
	}
}

// catIO: programs that read their operands (cat, sort, head, …); some
// write an output file too.
func catIO(name, spec string, args []Word, s *sink) {
	flags, pos := parseGNU(args, opts{short: spec, long: " output lines bytes key field-separator "})
	switch name {
	case "sort", "iconv", "split", "csplit", "gpg", "sdiff", "basenc":
		s.write(values(flags, "-o", "--output")...)
	}
	if name == "uniq" && len(pos) > 1 {
		s.write(pos[1])
		pos = pos[:1]
	}
	if name == "split" && len(pos) > 1 {
		s.write(Word{Lit: pos[1].Lit + "*", Dynamic: true, Pattern: escapeLit(pos[1].Lit) + "*"})
		pos = pos[:1]
	}
	s.read(pos...)
}

// grepIO: searches read their files, and with -r every file below their
// folders.
func grepIO(name string, o opts, args []Word, s *sink) {
	flags, pos := parseGNU(args, o)
	s.read(values(flags, "-f", "--file", "--exclude-from", "--ignore-file")...)
	if !has(flags, "-e", "--regexp", "-f", "--file") && len(pos) > 0 {
		pos = pos[1:]
	}
	s.read(pos...)
	recursive := name == "rg" || name == "ag" || name == "ack" || has(flags, "-r", "-R", "--recursive", "--dereference-recursive")
	for _, v := range values(flags, "-d", "--directories") {
		recursive = recursive || v.Lit == "recurse"
	}
	if !recursive {
		return
	}
	if len(pos) == 0 {
		pos = []Word{{Lit: "."}}
	}
	visible := (name == "rg" || name == "ag") && !has(flags, "--hidden", "-u", "-uu", "-uuu", "--unrestricted", "-.", "--all-types") && !hasAny(args, "-uu", "-uuu", "-.")
	for _, p := range pos {
		if !p.Dynamic {
			t := treeWord(p.Lit)
			t.Visible = visible
			s.read(t)
		}
	}
}

func awkIO(args []Word, s *sink) {
	flags, pos := parseGNU(args, opts{short: "fvF", long: " file assign field-separator source "})
	s.read(values(flags, "-f", "--file")...)
	if !has(flags, "-f", "--file", "--source") && len(pos) > 0 {
		pos = pos[1:]
	}
	for _, p := range pos {
		if !isAssignment(p) {
			s.read(p)
		}
	}
	inplace := false
	for _, v := range values(flags, "-i", "--include") {
		if v.Dynamic || strings.Contains(strings.ToLower(v.Lit), "inplace") {
			inplace = true
		}
	}
	for _, a := range args {
		if a.Dynamic || strings.Contains(strings.ToLower(a.Lit), "inplace") {
			inplace = true // @include "inplace" in the program, -iinplace
		}
	}
	if inplace {
		s.write(pos...)
	}
}

func sourceIO(args []Word, s *sink) {
	if len(args) > 0 {
		s.read(args[0])
	}
}

func rsyncIO(args []Word, s *sink) {
	o := opts{short: "cFiJloPSe", long: " rsh exclude include exclude-from include-from files-from filter partial-dir temp-dir compare-dest copy-dest link-dest chmod chown usermap groupmap backup-dir suffix rsync-path log-file password-file "}
	flags, pos := parseGNU(args, o)
	s.read(values(flags, "--exclude-from", "--include-from", "--files-from", "--password-file", "-F", "-i")...)
	if len(pos) > 0 {
		s.write(pos[len(pos)-1])
		s.tree(pos[len(pos)-1])
		s.read(pos[:len(pos)-1]...)
		if has(flags, "--remove-source-files") {
			s.write(pos[:len(pos)-1]...)
		}
	}
}

func ddIO(args []Word, s *sink) {
	for _, a := range args {
		switch {
		case strings.HasPrefix(a.Lit, "if="):
			s.read(trimWord(a, "if="))
		case strings.HasPrefix(a.Lit, "of="):
			s.write(trimWord(a, "of="))
		}
	}
}

func teeIO(args []Word, s *sink) {
	_, pos := parseGNU(args, opts{})
	s.write(pos...)
}

// fileOpIO: programs that create, change or delete their operands.
func fileOpIO(name string, args []Word, s *sink) {
	o := map[string]string{"truncate": "sr", "touch": "dtr", "mkdir": "m", "shred": "ns", "mknod": "m", "mkfifo": "m"}[name]
	flags, pos := parseGNU(args, opts{short: o, long: " size reference date mode iterations "})
	s.read(values(flags, "-r", "--reference")...)
	if name == "mknod" && len(pos) > 1 {
		pos = pos[:1]
	}
	s.write(pos...)
	switch name {
	case "rm", "rmdir", "unlink", "shred", "srm", "trash", "trash-put":
		s.tree(pos...)
	}
}

func permIO(name string, args []Word, s *sink) {
	_, targets := permArgs(name, args)
	s.write(targets...)
}

func zipIO(args []Word, s *sink) {
	flags, pos := parseGNU(args, opts{short: "bnOtTx"})
	if len(pos) == 0 {
		return
	}
	s.write(pos[0])
	s.read(pos[1:]...)
	if has(flags, "-r", "--recurse-paths") {
		for _, p := range pos[1:] {
			if !p.Dynamic {
				s.read(treeWord(p.Lit))
			}
		}
	}
}

func unzipIO(args []Word, s *sink) {
	flags, pos := parseGNU(args, opts{short: "dxP"})
	if len(pos) > 0 {
		s.read(pos[0])
	}
	if has(flags, "-p", "-l", "-t", "-v", "-Z") {
		return
	}
	dir := "."
	if d := values(flags, "-d"); len(d) > 0 && !d[0].Dynamic {
		s.tree(d[0])
		s.write(treeWord(d[0].Lit))
	} else {
		if len(d) > 0 {
			dir = d[0].Lit
			s.tree(d[0])
		}
		s.write(dirContents(dir))
	}
}

// findIO: find prints names; its -exec commands are analysed on their own.
func findIO(args []Word, s *sink) {
	for i := 0; i+1 < len(args); i++ {
		switch args[i].Lit {
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			s.write(args[i+1])
		}
	}
}

func opensslIO(args []Word, s *sink) {
	for i := 0; i+1 < len(args); i++ {
		switch args[i].Lit {
		case "-in", "-inkey", "-key", "-kfile", "-CAfile", "-cert", "-passin", "-signkey", "-certfile":
			s.read(trimWord(args[i+1], "file:"))
			i++
		case "-out":
			s.write(args[i+1])
			i++
		}
	}
}

func patchIO(args []Word, s *sink) {
	flags, pos := parseGNU(args, opts{short: "iopBdDFrVYzg", long: " input output strip directory reject-file "})
	s.read(values(flags, "-i", "--input")...)
	s.write(values(flags, "-o", "--output")...)
	s.write(pos...)
	// patch -d DIR writes the files the diff names below DIR
	s.tree(values(flags, "-d", "--directory")...)
}

// interpreterIO: an interpreter reads its script (the first operand, when
// no code is given inline), and perl -i writes its files.
func interpreterIO(c *Command, name string, args []Word, s *sink) {
	o := interpreters[name]
	flags, pos := parseGNU(args, o)
	if name == "perl" && hasInPlace(args) {
		s.write(pos...)
	}
	if len(codeArgs(c)) == 0 && !has(flags, "-m") && len(pos) > 0 {
		s.read(pos[0])
		pos = pos[1:]
	}
	unknownIO(pos, s)
}

func isFD(w Word) bool {
	if w.Dynamic {
		return false
	}
	s := strings.TrimSuffix(w.Lit, "-")
	if s == "" {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// unknownIO: any operand, and the value of any --option=value, may be a
// path the program reads or writes.
func unknownIO(args []Word, s *sink) {
	afterDash := false
	for _, a := range args {
		if !afterDash && !a.Dynamic && strings.HasPrefix(a.Lit, "-") {
			if a.Lit == "--" {
				afterDash = true
				continue
			}
			if name, _, ok := strings.Cut(a.Lit, "="); ok {
				s.both(trimWord(a, name+"="))
			}
			continue
		}
		s.both(a)
	}
}

func escapeLit(s string) string {
	var b wordBuilder
	b.literal(s)
	return string(b.pat)
}

// dirContents is a Dynamic word for anything below dir.
func dirContents(dir string) Word {
	dir = strings.TrimRight(dir, "/")
	if dir == "" {
		dir = "/"
	}
	sep := "/"
	if strings.HasSuffix(dir, "/") {
		sep = ""
	}
	return Word{Lit: dir + sep + "*", Dynamic: true, Expands: true, Pattern: escapeLit(dir) + sep + "**"}
}

// treeWord stands for every file below dir (Word.Under).
func treeWord(dir string) Word {
	w := dirContents(dir)
	w.Under = dir
	return w
}

func hasInPlace(args []Word) bool {
	for _, a := range args {
		if a.Dynamic || len(a.Lit) < 2 || a.Lit[0] != '-' || a.Lit[1] == '-' {
			if a.Lit == "--in-place" || strings.HasPrefix(a.Lit, "--in-place=") {
				return true
			}
			continue
		}
		for j := 1; j < len(a.Lit); j++ {
			c := a.Lit[j]
			if c == 'i' {
				return true
			}
			if c == 'e' || c == 'E' || c == 'f' || c == 'I' || c == 'M' || c == 'm' {
				break // the rest is a value
			}
		}
	}
	return false
}

func sedIO(args []Word, s *sink) {
	flags, pos := parseGNU(args, opts{short: "efl", optional: "i", long: " expression file line-length "})
	s.read(values(flags, "-f", "--file")...)
	if !has(flags, "-e", "--expression", "-f", "--file") && len(pos) > 0 {
		pos = pos[1:]
	}
	s.read(pos...)
	if has(flags, "-i") || hasInPlace(args) {
		s.write(pos...)
	}
}

func jqIO(name string, args []Word, s *sink) {
	var pos []Word
	fromFile := false
	inPlace := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.Dynamic || !strings.HasPrefix(a.Lit, "-") || a.Lit == "-" {
			pos = append(pos, a)
			continue
		}
		switch a.Lit {
		case "--":
			pos = append(pos, args[i+1:]...)
			i = len(args)
		case "--arg", "--argjson":
			i += 2
		case "--slurpfile", "--rawfile":
			if i+2 < len(args) {
				s.read(args[i+2])
			}
			i += 2
		case "-f", "--from-file":
			fromFile = true
			if i+1 < len(args) {
				s.read(args[i+1])
			}
			i++
		case "-L", "--indent", "--output-format", "-o", "-p", "--input-format":
			i++
		case "-i", "--inplace":
			inPlace = true
		}
	}
	if name == "yq" && len(pos) > 0 {
		switch pos[0].Lit {
		case "e", "eval", "ea", "eval-all":
			pos = pos[1:]
		}
	}
	if !fromFile && len(pos) > 0 {
		pos = pos[1:]
	}
	s.read(pos...)
	if inPlace {
		s.write(pos...)
	}
}

func copyIO(name string, args []Word, s *sink) {
	o := opts{short: "tS", long: " target-directory suffix "}
	if name == "install" {
		o = opts{short: "gmotS", long: " group mode owner target-directory suffix strip-program "}
	}
	flags, pos := parseGNU(args, o)
	if name == "install" && has(flags, "-d", "--directory") {
		s.write(pos...)
		return
	}
	var dest []Word
	if t := values(flags, "-t", "--target-directory"); len(t) > 0 {
		dest = t
	} else if len(pos) > 1 {
		dest = pos[len(pos)-1:]
		pos = pos[:len(pos)-1]
	} else if len(pos) == 1 && (name == "ln" || name == "link") {
		dest = []Word{{Lit: baseName(pos[0].Lit)}}
	}
	s.write(dest...)
	s.read(pos...)
	if has(flags, "-b", "--backup", "-S", "--suffix") {
		// The file a backup renames the destination to: DEST<suffix>
		// (DEST/<base><suffix> in a folder), the suffix given here, or
		// "~" (SIMPLE_BACKUP_SUFFIX set on the line is the policy's);
		// cp -b -S rc x ~/.bash makes the old ~/.bash ~/.bashrc.
		suffix := Word{Lit: "~"}
		if v := values(flags, "-S", "--suffix"); len(v) > 0 {
			suffix = v[len(v)-1]
		}
		for _, d := range dest {
			lit := strings.TrimRight(d.Lit, "/")
			names := []string{lit}
			for _, p := range pos {
				if b := baseName(strings.TrimRight(p.Lit, "/")); !p.Dynamic && b != "" && b != "." && b != ".." {
					names = append(names, lit+"/"+b)
				}
			}
			for _, n := range names {
				if d.Dynamic || suffix.Dynamic {
					s.write(Word{Lit: n + suffix.Lit, Dynamic: true, Expands: true, Pattern: "**"})
					continue
				}
				s.write(Word{Lit: n + suffix.Lit})
			}
		}
	}
	recursive := has(flags, "-r", "-R", "-a", "--recursive", "--archive")
	switch name {
	case "mv":
		s.write(pos...)
		s.tree(pos...)
		s.tree(dest...)
	case "ln", "link":
		s.links = append(s.links, pos...)
		if name == "link" || !has(flags, "-s", "--symbolic") {
			// A hard link is the file under a second name: writing the
			// link writes it, and no symlink shows where it leads.
			s.write(pos...)
		}
	case "cp", "install":
		if name == "cp" && has(flags, "-s", "--symbolic-link") {
			s.links = append(s.links, pos...) // cp -s makes links to the sources
		}
		if name == "cp" && has(flags, "-l", "--link") {
			s.write(pos...) // hard links, as ln makes them
			if recursive {
				s.tree(pos...)
			}
		}
		if recursive {
			s.tree(dest...)
			for _, p := range pos {
				if !p.Dynamic {
					s.read(treeWord(p.Lit)) // every file below it is copied
				}
			}
		}
	}
	// The file a copy into a folder creates: DEST/<base of the source>.
	for _, d := range dest {
		if d.Dynamic {
			continue
		}
		for _, p := range pos {
			if b := baseName(strings.TrimRight(p.Lit, "/")); !p.Dynamic && b != "" && b != "." && b != ".." {
				s.tree(Word{Lit: strings.TrimRight(d.Lit, "/") + "/" + b})
			}
		}
	}
}

// permArgs splits chmod/chown/chgrp arguments into the mode (or owner)
// and the targets.
func permArgs(name string, args []Word) (mode *Word, targets []Word) {
	ref := false
	dash := false
	for i := range args {
		a := args[i]
		s := a.Lit
		if !dash && !a.Dynamic {
			if s == "--" {
				dash = true
				continue
			}
			if strings.HasPrefix(s, "--") {
				if strings.HasPrefix(s, "--reference") {
					ref = true
				}
				continue
			}
			if len(s) > 1 && s[0] == '-' {
				if name == "chmod" && mode == nil && !ref && strings.Trim(s[1:], "rwxXst") == "" {
					mode = &args[i]
				}
				continue
			}
		}
		if mode == nil && !ref {
			mode = &args[i]
			continue
		}
		targets = append(targets, a)
	}
	return mode, targets
}

var curlOpts = opts{short: "AbcCdDeEFHKmoPQrTtuUwxXyYz", long: " data data-raw data-binary data-ascii data-urlencode json form form-string upload-file output request header user user-agent referer cookie cookie-jar config dump-header max-time connect-timeout proxy range retry write-out output-dir trace trace-ascii stderr cacert cert key capath ciphers resolve connect-to url-query url netrc-file etag-save etag-compare libcurl oauth2-bearer "}

func curlIO(args []Word, s *sink) {
	flags, pos := parseGNU(args, curlOpts)
	for _, f := range flags {
		v := f.val
		switch f.name {
		case "-d", "--data", "--data-binary", "--data-ascii", "--json", "--data-urlencode":
			if i := strings.IndexByte(v.Lit, '@'); i >= 0 && (i == 0 || f.name == "--data-urlencode") && v.Lit[i+1:] != "-" {
				s.read(trimWord(v, v.Lit[:i+1]))
			}
		case "-F", "--form":
			_, val, _ := strings.Cut(v.Lit, "=")
			if strings.HasPrefix(val, "@") || strings.HasPrefix(val, "<") {
				file, _, _ := strings.Cut(val[1:], ";")
				if file != "-" {
					s.read(trimWord(Word{Lit: file, Dynamic: v.Dynamic, Expands: v.Expands}, ""))
				}
			}
		case "-T", "--upload-file", "-K", "--config", "--cacert", "--cert", "--key", "--netrc-file", "--etag-compare":
			s.read(v)
		case "-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr", "--etag-save", "--libcurl":
			if v.Lit != "-" {
				s.write(v)
			}
		case "--url":
			pos = append(pos, v)
		}
	}
	dir := ""
	if d := values(flags, "--output-dir"); len(d) > 0 {
		dir = strings.TrimRight(d[0].Lit, "/") + "/"
	}
	remote := has(flags, "-O", "--remote-name", "--remote-name-all")
	for _, u := range pos {
		if p, ok := strings.CutPrefix(u.Lit, "file://"); ok {
			if i := strings.IndexByte(p, '/'); i > 0 {
				p = p[i:] // file://host/path
			}
			s.read(Word{Lit: p, Dynamic: u.Dynamic, Expands: u.Expands, Pattern: patternOr(u, "**")})
		}
		if remote {
			s.write(urlBase(u, dir, ""))
		}
	}
}

func patternOr(w Word, p string) string {
	if w.Dynamic {
		return p
	}
	return ""
}

// urlBase is the file a download of u lands in.
func urlBase(u Word, dir, fallback string) Word {
	p := u.Lit
	if i := strings.Index(p, "://"); i >= 0 {
		p = p[i+3:]
		if j := strings.IndexByte(p, '/'); j >= 0 {
			p = p[j:]
		} else {
			p = ""
		}
	}
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	base := baseName(p)
	if base == "" {
		base = fallback
	}
	if u.Dynamic {
		return Word{Lit: dir + base, Dynamic: true, Expands: u.Expands, Pattern: escapeLit(dir) + "**"}
	}
	return Word{Lit: dir + base}
}

var wgetOpts = opts{short: "OoaPiBeDtTwQUlAR", long: " output-document output-file append-output directory-prefix input-file base execute domains tries timeout wait quota user-agent level accept reject post-data post-file body-data body-file method header user password load-cookies save-cookies ca-certificate certificate private-key "}

func wgetIO(args []Word, s *sink) {
	flags, pos := parseGNU(args, wgetOpts)
	s.read(values(flags, "-i", "--input-file", "--post-file", "--body-file", "--load-cookies", "--private-key", "--certificate", "--ca-certificate")...)
	for _, v := range values(flags, "-o", "--output-file", "-a", "--append-output", "--save-cookies") {
		s.write(v)
	}
	docs := values(flags, "-O", "--output-document")
	for _, v := range docs {
		if v.Lit != "-" {
			s.write(v)
		}
	}
	if len(docs) > 0 {
		return
	}
	dir := ""
	if d := values(flags, "-P", "--directory-prefix"); len(d) > 0 {
		dir = strings.TrimRight(d[0].Lit, "/") + "/"
	}
	if has(flags, "-r", "--recursive", "-m", "--mirror") {
		if dir == "" {
			dir = "./"
		}
		s.write(dirContents(dir))
		return
	}
	for _, u := range pos {
		s.write(urlBase(u, dir, "index.html"))
	}
}

func tarIO(args []Word, s *sink) {
	mode := byte(0)
	var archives, dirs, ops []Word
	toStdout := false
	valueFor := func(c byte, w Word) {
		switch c {
		case 'f':
			archives = append(archives, w)
		case 'C':
			dirs = append(dirs, w)
		case 'T', 'X':
			s.read(w)
		}
	}
	const takes = "fCTXbN"
	for i := 0; i < len(args); i++ {
		a := args[i]
		lit := a.Lit
		bundle := i == 0 && !a.Dynamic && lit != "" && lit[0] != '-' && strings.Trim(lit, "cxtrufvzjJaZpPkhOwWmSlMBGiy") == ""
		switch {
		case a.Dynamic:
			ops = append(ops, a)
		case bundle || len(lit) > 1 && lit[0] == '-' && lit[1] != '-':
			start := 1
			if bundle {
				start = 0
			}
			for j := start; j < len(lit); j++ {
				c := lit[j]
				switch c {
				case 'c', 'x', 't', 'r', 'u':
					mode = c
				case 'O':
					toStdout = true
				}
				if strings.IndexByte(takes, c) >= 0 {
					if !bundle && j < len(lit)-1 {
						valueFor(c, Word{Lit: lit[j+1:]})
						break
					}
					if i+1 < len(args) {
						i++
						valueFor(c, args[i])
					}
					if !bundle {
						break
					}
				}
			}
		case strings.HasPrefix(lit, "--"):
			name, val, hasVal := strings.Cut(lit, "=")
			var v Word
			if hasVal {
				v = Word{Lit: val}
			}
			need := func() Word {
				if !hasVal && i+1 < len(args) {
					i++
					return args[i]
				}
				return v
			}
			switch name {
			case "--create":
				mode = 'c'
			case "--extract", "--get":
				mode = 'x'
			case "--list":
				mode = 't'
			case "--append":
				mode = 'r'
			case "--update":
				mode = 'u'
			case "--to-stdout":
				toStdout = true
			case "--file":
				valueFor('f', need())
			case "--directory":
				valueFor('C', need())
			case "--files-from", "--exclude-from":
				s.read(need())
			}
		default:
			ops = append(ops, a)
		}
	}
	dir := ""
	if len(dirs) > 0 {
		dir = strings.TrimRight(dirs[len(dirs)-1].Lit, "/") + "/"
	}
	switch mode {
	case 'c', 'r', 'u':
		s.write(archives...)
		for _, o := range ops {
			if dir != "" && !strings.HasPrefix(o.Lit, "/") {
				o = Word{Lit: dir + o.Lit, Dynamic: o.Dynamic, Expands: o.Expands, Pattern: patternOr(o, escapeLit(dir)+o.Pattern)}
			}
			s.read(o)
			if !o.Dynamic {
				s.read(treeWord(o.Lit)) // a folder goes in whole
			}
		}
	case 'x':
		s.read(archives...)
		if toStdout {
			return
		}
		if len(dirs) > 0 {
			s.tree(dirs[len(dirs)-1])
		}
		if len(ops) == 0 {
			if dir == "" || len(dirs) == 0 || dirs[len(dirs)-1].Dynamic || strings.Trim(path.Clean(dir), "./") == "" {
				s.write(dirContents(cmp.Or(dir, "./")))
			} else {
				s.write(treeWord(dir)) // a folder other than the working one: judged by what it holds
			}
			return
		}
		for _, o := range ops {
			s.write(Word{Lit: dir + o.Lit, Dynamic: o.Dynamic, Expands: o.Expands, Pattern: patternOr(o, escapeLit(dir)+o.Pattern)})
		}
	default:
		s.read(archives...)
	}
}

// gitGlobal skips git's own options and returns the subcommand's index.
func gitGlobal(args []Word) (int, bool) {
	alias := false
	i := 0
	for i < len(args) && !args[i].Dynamic && strings.HasPrefix(args[i].Lit, "-") {
		s := args[i].Lit
		switch s {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--exec-path", "--list-cmds", "--attr-source":
			if s == "-c" && i+1 < len(args) && strings.HasPrefix(strings.ToLower(args[i+1].Lit), "alias.") {
				alias = true
			}
			i += 2
			continue
		}
		if strings.HasPrefix(s, "-c") && strings.HasPrefix(strings.ToLower(s[2:]), "alias.") {
			alias = true
		}
		if strings.HasPrefix(s, "--config-env=") && strings.Contains(strings.ToLower(s), "alias.") {
			alias = true
		}
		i++
	}
	return i, alias
}

func gitIO(args []Word, s *sink) {
	i, _ := gitGlobal(args)
	if i >= len(args) {
		return
	}
	sub := args[i]
	rest := args[i+1:]
	var pos []Word
	for k := 0; k < len(rest); k++ {
		a := rest[k]
		if !a.Dynamic && strings.HasPrefix(a.Lit, "-") && a.Lit != "-" {
			switch a.Lit {
			case "-m", "--message", "-F", "--file", "-b", "-B", "--author", "--date", "-o", "--output":
				if (a.Lit == "-F" || a.Lit == "--file") && k+1 < len(rest) {
					s.read(rest[k+1])
				}
				if (a.Lit == "-o" || a.Lit == "--output") && k+1 < len(rest) {
					s.write(rest[k+1])
				}
				k++
			}
			if name, _, ok := strings.Cut(a.Lit, "="); ok && (name == "--output" || name == "--file") {
				s.both(trimWord(a, name+"="))
			}
			continue
		}
		pos = append(pos, a)
	}
	switch sub.Lit {
	case "checkout", "restore", "rm", "mv", "apply", "am", "switch", "stash", "clean", "reset", "worktree", "clone", "init", "submodule", "sparse-checkout", "merge", "rebase", "pull", "cherry-pick", "revert":
		s.both(pos...)
		// the work tree these write: -C and --work-tree move it (and
		// what the operands are relative to), clone and worktree add
		// make one at their last operand
		for k := 0; k < i; k++ {
			switch a := args[k]; {
			case (a.Lit == "-C" || a.Lit == "--work-tree") && k+1 < i:
				s.tree(args[k+1])
				k++
			case strings.HasPrefix(a.Lit, "--work-tree="):
				s.tree(trimWord(a, "--work-tree="))
			case a.Lit == "--git-dir" || strings.HasPrefix(a.Lit, "--git-dir=") ||
				a.Lit == "-c" && k+1 < i && strings.HasPrefix(strings.ToLower(args[k+1].Lit), "core.worktree") ||
				strings.HasPrefix(strings.ToLower(a.Lit), "-ccore.worktree") || a.Lit == "-c" && k+1 < i && args[k+1].Dynamic:
				// another repository's core.worktree (or this one's
				// given here) may be any folder, the home's included
				s.write(Word{Lit: "$GIT_WORK_TREE", Dynamic: true, Expands: true, Pattern: "**"})
			}
		}
		if sub.Lit == "clone" || sub.Lit == "worktree" || sub.Lit == "init" || sub.Lit == "submodule" {
			s.tree(pos...)
		}
	case "commit", "tag", "branch", "push", "fetch", "remote", "config", "status", "log-level":
		// operands are names, refs, messages
		if sub.Lit == "config" {
			gitConfigIO(rest, s)
			return
		}
		s.read(pos...)
	default:
		for _, p := range pos {
			s.read(p)
			if _, path, ok := strings.Cut(p.Lit, ":"); ok && path != "" && !strings.Contains(p.Lit, "://") {
				s.read(trimWord(p, p.Lit[:len(p.Lit)-len(path)]))
			}
		}
	}
}

// gitConfigIO: `git config` with a value, --unset, --add, an edit or a
// section change writes the config file it names (.git/config by default,
// ~/.gitconfig with --global, the --file operand).
func gitConfigIO(args []Word, s *sink) {
	file := Word{Lit: ".git/config"}
	write, operands := false, 0
	for k := 0; k < len(args); k++ {
		a := args[k]
		switch {
		case a.Dynamic:
			operands++
		case a.Lit == "--global":
			file = Word{Lit: "~/.gitconfig"}
		case a.Lit == "--system":
			file = Word{}
		case a.Lit == "-f" || a.Lit == "--file":
			if k+1 < len(args) {
				k++
				file = args[k]
			}
		case strings.HasPrefix(a.Lit, "--file="):
			file = trimWord(a, "--file=")
		case a.Lit == "--unset" || a.Lit == "--unset-all" || a.Lit == "--add" || a.Lit == "--replace-all" ||
			a.Lit == "--rename-section" || a.Lit == "--remove-section" || a.Lit == "-e" || a.Lit == "--edit" ||
			a.Lit == "set" || a.Lit == "unset" || a.Lit == "edit" || a.Lit == "rename-section" || a.Lit == "remove-section":
			write = true
		case a.Lit == "get" || a.Lit == "list" || a.Lit == "-l" || a.Lit == "--list" || strings.HasPrefix(a.Lit, "--get"):
			return
		case strings.HasPrefix(a.Lit, "-"):
		default:
			operands++
		}
	}
	if (write || operands >= 2) && (file.Lit != "" || file.Dynamic) {
		s.write(file)
	}
}

// GoEnvFile is the file `go env -w` and `go env -u` write when GOENV is not
// set: os.UserConfigDir()/go/env. GOFLAGS=-toolexec there runs a program
// at the person's next go build.
const GoEnvFile = "~/.config/go/env"

// goEnvIO: `go env -w NAME=VALUE` and `go env -u NAME` write go's
// environment file.
func goEnvIO(args []Word, s *sink) {
	if len(args) == 0 || args[0].Dynamic || args[0].Lit != "env" {
		return
	}
	for _, a := range args[1:] {
		if a.Dynamic || a.Lit == "-w" || a.Lit == "-u" || strings.HasPrefix(a.Lit, "-w=") || strings.HasPrefix(a.Lit, "-u=") {
			s.write(Word{Lit: GoEnvFile})
			return
		}
	}
}

// settingsIO: the commands that write a package manager's or the user's
// service manager's settings in the home, the way git config --global
// writes ~/.gitconfig: npm config set (~/.npmrc: script-shell,
// node-options run at the next npm run), pip config set
// (~/.config/pip/pip.conf: an index of another's), yarn config set
// (~/.yarnrc, or ~/.yarnrc.yml with --home), and systemctl --user link,
// enable, edit… (~/.config/systemd/user: a unit the next login starts).
func settingsIO(name string, args []Word, s *sink) {
	sub := func(i int) string {
		n := 0
		for _, a := range args {
			if a.Dynamic {
				return "?"
			}
			if strings.HasPrefix(a.Lit, "-") {
				continue
			}
			if n == i {
				return a.Lit
			}
			n++
		}
		return ""
	}
	setting := func(verb string) bool {
		switch verb {
		case "set", "delete", "unset", "rm", "edit", "fix", "?":
			return true
		}
		return false
	}
	switch {
	case name == "npm" || name == "pnpm":
		if c := sub(0); c == "set" || c == "?" || (c == "config" || c == "c") && setting(sub(1)) {
			s.write(Word{Lit: "~/.npmrc"})
		}
	case name == "pip" || strings.HasPrefix(name, "pip3"):
		if sub(0) == "config" && setting(sub(1)) {
			s.write(Word{Lit: "~/.config/pip/pip.conf"}, Word{Lit: "~/.pip/pip.conf"})
		}
	case strings.HasPrefix(name, "python"):
		for i, a := range args {
			if a.Lit == "-m" && i+1 < len(args) && (args[i+1].Lit == "pip" || args[i+1].Dynamic) {
				settingsIO("pip", args[i+2:], s)
				return
			}
		}
	case name == "yarn":
		if sub(0) == "config" && setting(sub(1)) {
			s.write(Word{Lit: "~/.yarnrc"})
			if has(flagsOf(args), "-H", "--home") {
				s.write(Word{Lit: "~/.yarnrc.yml"})
			}
		}
	case name == "history":
		// history -w and -a write the history to a file: the operand, or
		// HISTFILE
		flags, pos := parseGNU(args, opts{short: "d"})
		for _, f := range flags {
			if f.name == "-w" || f.name == "-a" {
				if len(pos) > 0 {
					s.write(pos...)
				} else {
					s.write(Word{Lit: "$HISTFILE", Dynamic: true, Expands: true, Pattern: "**"})
				}
				break
			}
		}
	case name == "script":
		// script writes its typescript (default ./typescript) and logs
		flags, pos := parseGNU(args, opts{short: "cEoTIOBm", long: " command echo log-in log-out log-io log-timing logging-format output-limit timing "})
		s.write(values(flags, "-T", "-I", "-O", "-B", "--log-in", "--log-out", "--log-io", "--log-timing", "--timing")...)
		if len(pos) > 0 {
			s.write(pos[0])
		}
	case name == "csplit":
		flags, _ := parseGNU(args, opts{short: "fbn", long: " prefix suffix-format digits "})
		for _, p := range values(flags, "-f", "--prefix") {
			s.write(Word{Lit: p.Lit + "*", Dynamic: true, Expands: true, Pattern: escapeLit(p.Lit) + "*"})
		}
	case name == "cpio":
		flags, pos := parseGNU(args, opts{short: "EFHIMORDeCc", long: " file format pattern-file io-size message owner rsh-command directory block-size "})
		if has(flags, "-p", "--pass-through") && len(pos) > 0 {
			s.write(pos[len(pos)-1])
			s.tree(pos[len(pos)-1])
		}
		s.tree(values(flags, "-D", "--directory")...)
	case name == "7z" || name == "7za" || name == "7zz" || name == "7zr":
		for _, a := range args {
			if strings.HasPrefix(a.Lit, "-o") {
				s.tree(trimWord(a, "-o"))
			}
		}
	case name == "systemctl":
		user := false
		for _, a := range args {
			if a.Lit == "--user" || a.Dynamic {
				user = true
			}
		}
		switch v := sub(0); {
		case !user:
		case v == "?" || v == "link" || v == "enable" || v == "reenable" || v == "disable" || v == "mask" ||
			v == "unmask" || v == "edit" || v == "add-wants" || v == "add-requires" || v == "set-property" ||
			v == "revert" || v == "preset" || v == "preset-all" || v == "set-environment" || v == "import-environment":
			s.write(Word{Lit: "~/.config/systemd/user/" + v})
		}
	}
}

// flagsOf is every option word of args, split as GNU tools split them.
func flagsOf(args []Word) []optVal {
	flags, _ := parseGNU(args, opts{})
	return flags
}

// Package shell analyses bash command lines for the tool policy and for the
// guard's self-protection rule. It parses with mvdan.cc/sh/v3/syntax (bash
// dialect) and never runs anything: no IO, no exec, no environment.
//
// # Parsing
//
// [Parse] returns every simple command of a line: in pipelines, && || ;
// lists, subshells, { } groups, if/while/until/for/case bodies, function
// bodies, after `!`, in command substitutions ($(…) and backticks, in words,
// assignments, redirections, [[ ]], arithmetic and unquoted here-documents,
// where the shell runs them) and in process substitutions. Code in strings
// is parsed again, up to [MaxDepth] levels: `bash|sh|zsh|dash|ksh… -c '…'`
// (also `bash -lc`, `busybox sh -c`), a here-document or here-string fed to
// a shell, `echo '…' | sh`, a literal `eval`, `watch 'cmd'`,
// `ssh host 'cmd'`, `su -c`, `script -c`, `flock -c`, `npx -c`,
// `env -S '…'` and alias values.
//
// Interpreter code (python -c, node -e, perl -e, ruby -e, php -r, lua -e,
// awk's program, a here-document or echo/printf piped into an interpreter)
// is read for what reaches beyond it: a call that starts a program
// (os.system, subprocess.*, child_process.exec*, system, backticks,
// os.execute, …) with a literal argument is parsed as the command it runs,
// a literal list as its argv; a call that deletes a tree or a file
// (shutil.rmtree, fs.rmSync, FileUtils.rm_rf, remove_tree, os.remove, …)
// with a literal path becomes `rm -rf PATH` or `rm -f PATH`; either call
// with a computed argument makes the command Opaque. printf FORMAT ARGS
// piped into a shell is rendered (%s, %b, %c, %d, %%, \n, \t); `make -f -`
// (or /dev/stdin) with a here-document has its recipe lines parsed; git
// aliases starting with "!", command-valued git keys (core.pager,
// core.sshCommand, core.editor, diff.external, filters, …) given with -c
// or `git config`, ext:: URLs and environment variables that hold
// commands (GIT_SSH_COMMAND, PAGER, EDITOR, LESSOPEN, BASH_ENV, …) are
// parsed as the shell code they are. A program the reader does not know
// is read through as a wrapper when an argument names a shell, an
// interpreter or a program the rules judge followed by more words
// (`parallel rm -rf ::: ~`, `hyperfine 'rm -rf ~'`), and so are docker
// exec|run and kubectl exec.
//
// [Command.Dirs] follows cd, pushd and popd through a line: a subshell's,
// a pipeline part's or a substitution's cd stays inside it, a cd can fail
// (so after `cd x;` the folders before it stay possible, while after
// `cd x &&` only x is), and a target that is not literal is "?". [Reads] and [Writes] give a relative path from each
// folder its command may run in; the classifier judges a command from
// each. A variable assigned a literal or glob earlier in the line (x=v, a
// for loop's one item) stands for its value while nothing before it can
// create, move or link files; $PWD is "."; $TMPDIR (and ${TMPDIR:-/tmp})
// is /tmp; $(mktemp) is a fresh name in /tmp; a process substitution is a
// pipe under /dev/fd. Words that stand for the files below a folder
// (find's {}, `grep -r`/rg/zip -r/cp -r/tar c operands, unzip -d and tar
// -C targets, $(git ls-files PATTERN)) carry [Word.Under] and
// [Word.Name], so the caller can list what is there.
//
// Wrappers are peeled off with their options and listed in
// [Command.Wrappers]: sudo, doas, env (-i, -u, -C, -S, NAME=value), nice,
// nohup, setsid, timeout, stdbuf, ionice, chroot, taskset, chrt, command
// (not -v/-V), exec, time, strace, busybox/toybox applets, flock, xargs (the
// command it runs, with a Dynamic argument appended, or -I/-i arguments made
// Dynamic), npx/bunx/pnpx and npm|pnpm|yarn|bun exec|x|dlx (the package's
// command; @version stripped from the name), and `go run` of a package
// whose path names piagent. `find … -exec|-execdir|-ok|-okdir CMD {} ;|+`
// yields the find and the inner command (its `{}` words Dynamic, Outer set
// to the find).
//
// Quoted text and here-document bodies are data: `echo "docker volume
// prune"` is one command, echo. Assignments alone yield no command. A
// statement that is only redirections (`> f`, or the redirections of a
// compound command) yields a command with no Argv. Code the analysis
// cannot see (`eval "$x"`, `sh -c "$x"`, `curl … | sh`, `source <(…)`) is
// a command with Opaque set. [Analysis.Assignments] lists every variable
// assignment (statements, FOO=1 prefixes, declare/export/local, array
// elements, for-loop items).
//
// # Rules
//
// [Classify] returns findings with these stable rule codes:
//
// Where a recursive delete lands decides it (rm -r, rimraf, find -delete,
// rsync --delete, shutil.rmtree and kin): inside the project or the
// temporary folder it passes; the project itself is rm-project (confirm,
// Local); anywhere else outside the project and the temporary folder is
// rm-outside (block); a relative path after a cd that is not literal is
// rm-unknown (confirm); and the system, the home folder and what holds the
// project are rm-root (block). The home folder is never temporary, wherever
// it is. rsync --delete into the project is rsync-delete (confirm, Local).
//
// Destructive (block):
//   - secret-export: gpg --export-secret-keys and --export-secret-subkeys.
//   - rm-root: rm -r/-R/--recursive (with or without -f: an agent's shell
//     has no terminal, so rm never stops to ask) of /, a top-level
//     directory, ~, ~user, $HOME, the home directory or the project root by
//     absolute path, an ancestor of either, `.`, `..`, a glob listing one
//     of those (`/*`, `~/*`, `*` when the working directory is the project
//     root, home or unknown; a glob with a literal part such as
//     `*.egg-info` or `*/build` does not list everything, except under / or
//     an ancestor of home or the project, where it can name one of them,
//     as `/h*` or `../p*` can), a path computed at run time ($x, $(…), an
//     xargs argument), or the `{}` of a find -exec whose find matches
//     everything under such a root. `rm -rf ./build` and `rm -rf build/*`
//     pass; `rm -r ~/x` is rm-outside.
//   - find-delete-root: find -delete whose starting point is such a root and
//     whose expression does not narrow by name, path, time, size, owner or
//     permission (-name, -path, -mtime, -size, …; -o or a negation undoes
//     the narrowing). `find . -name '*.pyc' -delete` passes.
//   - device-write: any write to a device under /dev (dd of=, redirections,
//     tee, cp, shred, truncate …) except /dev/null, zero, full, random,
//     urandom, tty, console, stdin/stdout/stderr, fd/*, pts/*, shm/*,
//     tcp/*, udp/*; dd of= a path computed at run time.
//   - mkfs: mkfs*, mke2fs, mkswap, wipefs, mkdosfs, mkntfs, newfs; fdisk,
//     sfdisk, cfdisk, parted, gdisk, sgdisk unless listing (-l, print).
//   - git-clean-force: git clean with -f, -d and -x or -X, not -n.
//
// Destructive inside the project (confirm, Local: a person may well want
// them while writing source): git clean -f without -x; git reset --hard
// (it discards the uncommitted changes when Context.Dirty); git-discard:
// git checkout -f, git switch --discard-changes|-f, git checkout/restore of
// `.`, `:/`, `*` or a folder when Context.Dirty (restore --staged alone
// passes); git stash clear|drop; git branch -D; git reflog expire; git gc
// --prune=now; rm-project; rsync-delete. Removing the project when it holds
// piagent's own files (.git/config, .pi/…) is blocked by the guard's
// self-protection instead.
//   - chmod-world-writable: chmod -R with a mode granting write to others
//     (777, 666, a+rwx, o+w, …), whatever the target.
//   - chmod-root, chown-root: chmod/chown/chgrp -R of /, a top-level
//     directory, home or an ancestor of home or the project (the project
//     root itself passes: `chown -R me .` is ordinary).
//   - fork-bomb: a function that runs itself in a pipeline or in the
//     background (`:(){ :|:& };:`).
//   - ps-environ: ps with the BSD option e (`ps eww`, `ps auxe`), which
//     prints every process's environment, as /proc/*/environ holds it.
//
// Ship or spend (confirm):
//   - git-push: git push (not -n/--dry-run, which only talks to the
//     remote), git send-email, a git subcommand computed at run time, or
//     an alias defined with -c alias.*.
//   - package-publish: npm|pnpm|yarn|bun publish/unpublish/deprecate,
//     dist-tag/owner/access changes, yarn npm publish, cargo
//     publish/yank/owner, twine upload, poetry|uv|flit|hatch publish,
//     maturin upload, gem push/yank/owner, goreleaser release (not
//     --snapshot), dotnet nuget push, mvn deploy, gradle publish*.
//   - gh-write: every gh command except read-only verbs (view, list, status,
//     diff, checks, download, watch, browse, search, checkout, clone, logs,
//     verify) and `gh api` without a write method or fields.
//   - infra-apply: terraform|tofu|terragrunt apply/destroy/import/taint/
//     untaint/force-unlock/state rm|mv|push/workspace delete, pulumi
//     up/update/destroy/refresh/cancel/import, cdk|cdktf deploy/destroy.
//   - kubectl-write: kubectl/oc subcommands other than get, describe, logs,
//     top, explain, api-*, version, cluster-info, diff, auth, wait, events,
//     port-forward, proxy, kustomize, plugin, config view-like, rollout
//     status/history.
//   - helm-write: helm install/upgrade/uninstall/delete/rollback/push.
//   - http-write: curl -X (not GET/HEAD/OPTIONS), -d/--data*/--json (unless
//     -G), -F/--form, -T/--upload-file; wget --post-*/--body-*/--method;
//     httpie/xh with a write method or data items.
//   - docker-push: docker|podman|nerdctl push, image/manifest push, buildx
//     build --push.
//   - docker-prune: system/volume/image/container/network/builder prune,
//     volume rm, compose down -v (confirm, not block).
//   - cloud-write: aws operations other than describe-/list-/get-/… (aws s3
//     ls, and s3 cp/sync to a local destination, pass; aws configure
//     set), gcloud/az commands with a mutating verb (create, delete,
//     deploy, update, set, …).
//   - deploy: vercel (bare or deploy/--prod), netlify/firebase/wrangler/
//     fly/serverless deploy, railway up, heroku releases:rollback, surge.
//   - remote-copy: scp/rsync to a remote destination (host:path).
//
// Self-protection (issue 5):
//   - gate-self (block): a program whose base name starts with piagent
//     (piagent, piagent-mcp, at any path, through any wrapper, `go run
//     ./cmd/piagent…`, `npx piagent…`) with a subcommand that records or
//     changes decisions or configuration: approve, reject, reset, add,
//     remove, enable, disable, setup, uninstall, any --preset, and for
//     piagent the `mcp <those>` form. Read-only subcommands pass: list,
//     get, doctor, notice, help, completion, version, pi (launching),
//     --list and other flags alone, policy check|redact|show, guard serve,
//     extension path. An unknown subcommand, or an argument computed at
//     run time before the subcommand, blocks. So does a program computed
//     at run time (`$p approve x`) whose first operand is a guarded
//     subcommand, `mcp` or itself computed, or that appears in a line
//     naming piagent anywhere (`c=piagent-mcp,approve; IFS=,; $c`);
//     opaque code that names piagent or, read as shell, trips this rule
//     (`eval "$(decode) approve x"`; under xargs the upstream command's
//     text counts as the code's); interpreter code (python -c, node -e,
//     perl -e, awk …) that names piagent. A program that is only a
//     variable with one literal value in the line (`p=piagent-mcp; $p
//     approve`) is resolved first, for every rule. Names piagent is copied,
//     linked or built to in the same line (`cp $(which piagent-mcp) x`,
//     `go build -o x ./cmd/piagent-mcp`) count as piagent.
//   - opaque-shell (confirm): opaque code, or a program computed at run
//     time, that does not trip gate-self; a shell or an interpreter running
//     a script from outside the project (a file, or a file redirected to
//     `bash -s`), which the reader does not open.
//
// Choices: `truncate -s 0 FILE` is an ordinary write (reported by
// [Writes]), a device-write only for /dev targets. `git push --dry-run`
// passes.
//
// # Paths
//
// [Writes] and [Reads] list the paths a line may write or read, for the
// caller to check against its protected list (the caller expands `~`,
// resolves relative paths and symlinks). Programs are grouped: known
// readers (cat, less, head, tail, grep, rg, sed, awk, jq, diff, base64, …),
// known writers (tee, cp, mv, dd, …), programs that touch no named file
// (echo, printf, cd, ls, stat, file, du, tree, realpath, ssh, … — listing
// programs print names, not content), and everything else, whose every
// operand and --opt=value value may be read or written. Dynamic words are
// returned with Dynamic set and a Pattern.
package shell

// Package policy is piagent's tool policy: the tool registry, protected
// paths, input extraction, search channels, shell-command checks, modes and
// result redaction. Its core is pure: Decide and Redact take a Call and the
// Facts the caller gathered (home, working directory, project root, a
// symlink resolver, git state, the chosen mode, the session) and return
// values. The only IO is in load.go, which reads the policy files it is
// given.
//
// # Policy files
//
// The base policy (base-policy.json, embedded, "version": 1) is overlaid by
// the user's ~/.pi/piagent-policy.json and then by the project's
// <project>/.pi/piagent-policy.json. Files are JSON with comments; they are
// decoded strictly: "version" is required, keys are case-sensitive, unknown
// and duplicate keys are errors. A file that exists but does not parse makes
// Load return a *FileError (file, line, column) and a Policy that blocks
// every call: never a silently weaker policy.
//
// The user's file may change anything. The project's file may only tighten:
// add protectedPaths, shellProtectedPaths and execRules, make a rule's
// action stricter, raise registryMode to enforce, choose a stricter mode
// (a cap on the person's choice) or the standard profile. Everything else it
// tries (remove lists, allowReadPaths, registering tools, trusted-full-access,
// advisory under the user's enforce, a more permissive mode, "allow" for a
// rule) is ignored and listed by Violations.
//
// # Decide
//
// Decide checks, in order: the policy loaded; the mode is known; the
// registry (advisory: an unregistered tool warns once per tool per session;
// enforce: it is blocked, the MCP proxy "mcp" included, unless the profile is
// trusted-full-access; a piagent_ name counts only if it is one of this
// build's tools); protected paths in the input, whatever the registry mode;
// the search channels grep.glob and find.pattern; shell analysis of bash's
// command (and of a command field any other tool carries, such as the MCP
// proxy's args.command); the mode. Ship actions always need confirmation.
//
// # Input extraction
//
// Every string in the input is a path candidate, at any depth through
// objects and arrays, object keys included, except the values of these
// content fields:
//
//	content contents text query pattern command old_string new_string
//	oldText newText old_str new_str description prompt message title body
//	summary note comment reason
//
// (so edits[].oldText and edits[].newText are skipped too). Exceptions:
// grep.glob and find.pattern are search channels; bash.command goes to the
// shell analysis; the MCP proxy's search query is skipped. A string holding
// a JSON object or array is decoded and walked as well (the MCP proxy takes
// args as a JSON string). Each candidate is inspected as written,
// percent-decoded once (a broken escape stays as written), as a file:// URI's
// path, in the forms Pi's file tools open (Unicode spaces read as a space;
// for read, also the macOS name variants Pi tries for a name that does not
// exist: a narrow no-break space before AM/PM, NFD, the curly apostrophe),
// and split at separators ("--file=.env", "a,b", a sentence). Input
// nested deeper than MaxInspectionDepth (32, counting the input object) is
// blocked.
//
// # Matching
//
// Patterns without a leading "/" or "~/" match at any depth; "**" matches any
// number of folders, itself included (".git/**" covers ".git"); matching
// ignores case. A candidate has "\" turned into "/", a leading "@" dropped,
// "~" and $HOME expanded, is joined to Facts.Cwd when relative, and is
// matched as written, lexically cleaned, and as Facts.RealPath resolves it
// (for a path that does not exist, its nearest existing ancestor).
// allowReadPaths (.env.example, .env.sample) lift the protection for the
// read-only tools read, grep, find and ls and for shell reads, never for
// writes; a symlink named like an allowed file but pointing at .env is
// blocked by its resolved form.
//
// # Shell commands
//
// bash's command is parsed by package shell; a parse error blocks. Its
// findings block or ask (execRuleActions may change their action), the
// policy's execRules are applied, and every path a command reads or writes
// is checked against protectedPaths and shellProtectedPaths from each folder
// the line may be in (the working directory and every literal cd target; a
// relative path after a cd to a non-literal target is blocked). A glob is
// expanded with Facts.Glob when the caller gives one, and otherwise judged
// by every path it could match; an expansion ($x, $(…)) can be anything.
//
// # Modes
//
// readOnly < memory < docsWrite < sourceWrite < ship. read, grep, find, ls,
// the MCP proxy's search/describe and piagent's status and search tools read;
// a tool given only the memory capability writes memory; write and edit
// of docs/, doc/, plans/, reports/ at the project root or of a .md, .mdx,
// .markdown, .rst, .txt or .adoc file inside the project are docs writes;
// other writes, unknown tools, MCP tool calls and shell commands that are not
// known to be read-only are source writes; shell commands a rule asks to
// confirm (git push, publish, deploy) ship, except the destructive git
// commands that act on the project itself (git clean -f, git reset --hard,
// git stash clear/drop, git branch -D, git reflog expire, git gc
// --prune=now), which ask a person in sourceWrite.
package policy

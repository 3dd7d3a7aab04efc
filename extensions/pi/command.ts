// command.ts: the /piagent-mcp slash command. A slash command is a person's
// act (it never passes through tool_call), so this is where consent made in
// Pi is recorded: by running the piagent CLI, which does the work. What the
// command acts on it reads as the CLI's --json answer (the approval digest,
// whether tools wait to be accepted, what a decision did), never by matching
// the CLI's words; what only a person reads (a preview, a table) it shows.
//
// Three ways in, one set of subcommands:
//   - typed: `/piagent-mcp approve internal`;
//   - a menu (no argument, with a UI), built from the helper's `state`;
//   - without a UI (print or JSON mode): the status table and the list of
//     subcommands, printed at once; the command never waits for an answer.

import { spawn } from "node:child_process";
import type { ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import type { AutocompleteItem } from "@earendil-works/pi-tui";
import { type Fix, fixWords, type NoticeLine, noticeWords } from "./fix.ts";
import type { GateState, Guard, ServerState } from "./guard.ts";
import { describeFailure } from "./guard.ts";
import { FIND_HINT, piagentBinary } from "./helper.ts";

/** How long a piagent CLI run may take. */
const CLI_TIMEOUT_MS = 30_000;

/** Which servers a subcommand applies to; undefined: it takes no server. */
type Fits = ((s: ServerState) => boolean) | undefined;

interface Subcommand {
  name: string;
  usage: string;
  help: string;
  /** Servers this subcommand can act on (menus and completion). */
  fits?: Fits;
  /** The server argument is optional (reset). */
  optionalServer?: boolean;
  /** It records a decision or changes configuration (reload under the launcher). */
  changes?: boolean;
}

/** The servers a subcommand acts on are those whose state offers it (the helper's `actions`). */
const offers = (name: string): Fits => (s) => !!s.actions?.includes(name);

export const SUBCOMMANDS: Subcommand[] = [
  { name: "status", usage: "status", help: "the servers and their states, and the session notice" },
  { name: "list", usage: "list [--json]", help: "every configured server, where it comes from, its state" },
  { name: "get", usage: "get NAME", help: "one server's merged definition and provenance", fits: () => true },
  { name: "doctor", usage: "doctor", help: "explain what stops MCP here and how to fix it" },
  {
    name: "approve", usage: "approve NAME [--tools]", help: "show what a repository server runs, then approve it (--tools: accept what it now offers the model)",
    fits: offers("approve"), changes: true,
  },
  { name: "reject", usage: "reject NAME", help: "record that a repository server must not run here", fits: offers("reject"), changes: true },
  {
    name: "reset", usage: "reset [NAME]", help: "forget this project's decision (or all of them)",
    fits: offers("reset"), optionalServer: true, changes: true,
  },
  { name: "enable", usage: "enable NAME", help: "enable a disabled server", fits: offers("enable"), changes: true },
  { name: "disable", usage: "disable NAME", help: "disable a server", fits: offers("disable"), changes: true },
  { name: "add", usage: "add NAME (--url URL | -- CMD…)", help: "print the terminal command that adds a server (nothing is written)" },
  { name: "notice", usage: "notice", help: "print the session notice" },
];

function subcommand(name: string): Subcommand | undefined {
  return SUBCOMMANDS.find((s) => s.name === name);
}

/** Whether /piagent-mcp offers the piagent-mcp subcommand sub in Pi. */
export const inPi = (sub: string): boolean => subcommand(sub) !== undefined;

/** A fix in Pi's words: /piagent-mcp for what the command offers, several steps on several lines. */
export const fixInPi = (f: Fix | undefined): string => fixWords(f, inPi);

/** The session notice in Pi's words. */
export const noticeInPi = (lines: NoticeLine[]): string => noticeWords(lines, inPi);

/** Splits the argument text like a shell would, for quotes and backslashes only. */
export function splitArgs(text: string): string[] {
  const out: string[] = [];
  let cur = "";
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote) {
      if (ch === quote) quote = undefined;
      else if (ch === "\\" && quote === '"' && i + 1 < text.length && '"\\$`'.includes(text[i + 1]!)) cur += text[++i];
      else cur += ch;
      continue;
    }
    if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
    } else if (ch === "\\" && i + 1 < text.length) {
      cur += text[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) out.push(cur);
      cur = "";
      inWord = false;
    } else {
      cur += ch;
      inWord = true;
    }
  }
  if (inWord) out.push(cur);
  return out;
}

/** The output of one piagent CLI run. */
export interface CliRun {
  argv: string[];
  code: number | null;
  stdout: string;
  stderr: string;
  /** Set when the process could not be started or was killed. */
  failure?: string;
}

/** Runs `piagent mcp SUB --project DIR ARGS…` with stdin closed. */
export function runCli(project: string, sub: string, args: string[]): Promise<CliRun> {
  return runPiagent(project, ["mcp", sub, "--project", project, ...args]);
}

/** Runs `piagent ARGV…` in project with stdin closed. */
export function runPiagent(project: string, argv: string[]): Promise<CliRun> {
  const bin = piagentBinary();
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    let failure: string | undefined;
    const child = spawn(bin, argv, { cwd: project, stdio: ["ignore", "pipe", "pipe"], env: process.env });
    const timer = setTimeout(() => {
      failure = `it did not finish within ${CLI_TIMEOUT_MS / 1000}s`;
      child.kill("SIGKILL");
    }, CLI_TIMEOUT_MS);
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (s: string) => (stdout += s));
    child.stderr.on("data", (s: string) => (stderr += s));
    child.on("error", (err: NodeJS.ErrnoException) => {
      failure = err.code === "ENOENT" ? `${bin} was not found; ${FIND_HINT}` : err.message;
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ argv: [bin, ...argv], code, stdout, stderr, failure });
    });
  });
}

/** Where the command's words go: the UI when there is one, else stdio. */
export interface Output {
  info(text: string): void;
  warn(text: string): void;
  error(text: string): void;
}

export function outputFor(ctx: ExtensionCommandContext): Output {
  if (ctx.hasUI) {
    return {
      info: (t) => ctx.ui.notify(t, "info"),
      warn: (t) => ctx.ui.notify(t, "warning"),
      error: (t) => ctx.ui.notify(t, "error"),
    };
  }
  // In print and JSON modes Pi keeps stdout for the answer or the event
  // stream and routes what an extension writes there to stderr.
  const line = (t: string) => (t.endsWith("\n") ? t : t + "\n");
  return {
    info: (t) => void process.stdout.write(line(t)),
    warn: (t) => void process.stderr.write(line(t)),
    error: (t) => void process.stderr.write(line(t)),
  };
}

/** Shows a CLI run: its stdout as information, its stderr as a warning or an error. */
function show(out: Output, run: CliRun): boolean {
  if (run.failure) {
    out.error(`piagent: ${run.argv.slice(1, 3).join(" ")} failed: ${run.failure}`);
    return false;
  }
  const text = run.stdout.trimEnd();
  const err = run.stderr.trimEnd();
  if (run.code === 0) {
    if (text) out.info(text);
    if (err) out.warn(err);
    return true;
  }
  // Exit 1 is "needs attention" for list and doctor: the answer is still on stdout.
  if (text) out.info(text);
  if (err) out.error(err);
  if (!text && !err) out.error(`piagent: ${run.argv.slice(1, 3).join(" ")} exited with status ${run.code}`);
  return false;
}

function usageText(): string {
  const w = Math.max(...SUBCOMMANDS.map((s) => s.usage.length));
  return ["/piagent-mcp subcommands:", ...SUBCOMMANDS.map((s) => `  ${s.usage.padEnd(w)}  ${s.help}`)].join("\n");
}

/** The state of the session's project; last is kept for completion. */
export class StateCache {
  last: GateState | undefined;
  private readonly guard: Guard;
  constructor(guard: Guard) {
    this.guard = guard;
  }
  async refresh(project: string): Promise<GateState> {
    this.last = await this.guard.state(project);
    return this.last;
  }
}

/** Completion for /piagent-mcp: subcommands first, then server names. */
export function completions(prefix: string, state: GateState | undefined): AutocompleteItem[] | null {
  const text = prefix.trimStart();
  const m = text.match(/^(\S+)\s+(\S*)$/);
  if (!m) {
    if (/\s/.test(text)) return null;
    const items = SUBCOMMANDS.filter((s) => s.name.startsWith(text)).map((s) => ({
      value: s.fits ? `${s.name} ` : s.name,
      label: s.name,
      description: s.help,
    }));
    return items.length > 0 ? items : null;
  }
  const [, name, partial] = m;
  const sub = subcommand(name!);
  if (!sub?.fits || !state) return null;
  const items = state.servers
    .filter((s) => sub.fits!(s) && s.name.startsWith(partial!))
    .map((s) => ({ value: `${sub.name} ${s.name}`, label: s.name, description: s.state }));
  return items.length > 0 ? items : null;
}

export interface McpCommandDeps {
  guard: Guard;
  cache: StateCache;
  /** The session's project: ctx.cwd. */
  project(ctx: ExtensionCommandContext): string;
}

/** The handler of /piagent-mcp. */
export async function handleMcpCommand(args: string, ctx: ExtensionCommandContext, deps: McpCommandDeps): Promise<void> {
  const out = outputFor(ctx);
  const project = deps.project(ctx);
  const words = splitArgs(args);

  if (words.length === 0) {
    if (!ctx.hasUI) {
      // No one can answer a menu: print the status and the subcommands, and return.
      await status(out, project, deps, false);
      out.info(usageText());
      return;
    }
    const chosen = await menu(ctx, project, deps);
    if (!chosen) return;
    return runSubcommand(chosen.sub, chosen.args, ctx, out, project, deps);
  }

  const sub = subcommand(words[0]!);
  if (!sub) {
    out.error(`piagent: unknown subcommand ${JSON.stringify(words[0])}\n${usageText()}`);
    return;
  }
  let rest = words.slice(1);
  if (sub.fits && !sub.optionalServer && rest.length === 0) {
    const name = await pickServer(ctx, out, project, deps, sub);
    if (!name) return;
    rest = [name];
  }
  return runSubcommand(sub, rest, ctx, out, project, deps);
}

async function status(out: Output, project: string, deps: McpCommandDeps, withNotice: boolean): Promise<void> {
  const run = await runCli(project, "list", []);
  show(out, run);
  if (!withNotice) return;
  try {
    const st = await deps.cache.refresh(project);
    if (st.notice.length > 0) out.warn(noticeInPi(st.notice));
  } catch (err) {
    out.error(`piagent: ${describeFailure(err)}; every tool call is blocked until it answers`);
  }
}

async function runSubcommand(sub: Subcommand, args: string[], ctx: ExtensionCommandContext, out: Output,
  project: string, deps: McpCommandDeps): Promise<void> {
  switch (sub.name) {
    case "status":
      await status(out, project, deps, true);
      return;
    case "add": {
      // Adding a server is a person's act in a terminal: show the command.
      // --print-command goes first: the user's words may end in `-- COMMAND ARGS…`.
      const run = await runCli(project, "add", ["--print-command", ...args]);
      show(out, run);
      return;
    }
    case "approve": {
      const name = args[0];
      if (!name) {
        out.error("piagent: approve needs a server name");
        return;
      }
      // --yes, --json, --dry-run and --digest are the command's own to give.
      const extra = args.slice(1).filter((a, i, all) => !["--yes", "-y", "--json", "--dry-run", "--digest"].includes(a) &&
        all[i - 1] !== "--digest" && !a.startsWith("--digest="));
      if (extra.includes("--tools")) {
        // Accepting what the server now offers the model: show the change
        // (the CLI's dry run), ask when someone can answer, accept.
        const preview = await runJson<Preview>(out, project, "approve", [name, "--tools", "--dry-run", "--json"]);
        if (!preview) return;
        if (!preview.waiting) {
          out.info(preview.preview.trimEnd());
          return;
        }
        if (ctx.hasUI) {
          const ok = await askNo(ctx, `Accept what MCP server ${name} now offers the model?\n\n${preview.preview.trimEnd()}`, `Yes, accept the tools of ${name}`);
          if (!ok) {
            out.info(`piagent: the changed tools of ${name} stay blocked`);
            return;
          }
        } else {
          // The person typed the command themselves (pi -p "/piagent-mcp approve NAME --tools").
          out.info(preview.preview.trimEnd());
        }
        const done = await runJson<Preview>(out, project, "approve", [name, "--tools", "--yes", "--json"]);
        if (!done) return;
        const result = done.accepted ? `accepted the tools of ${done.server} as they are now` : done.preview.trimEnd();
        out.info(`piagent: ${result}`);
        if (done.accepted) await afterChange(ctx, out, project, deps, result);
        return;
      }
      // Show what will run before consent, exactly as the terminal shows it
      // (the definition, the pinned files, the warnings and the approval
      // digest); with a UI, ask the person, the answer defaulting to No.
      // Without one the person typed the command themselves (pi -p
      // "/piagent-mcp approve NAME"): the preview is shown all the same.
      const preview = await runJson<Preview>(out, project, "approve", [name, "--dry-run", "--json"]);
      if (!preview) return;
      const digest = preview.approvalDigest;
      if (!digest) {
        out.error(`piagent: the preview of ${name} has no approval digest; nothing was approved`);
        return;
      }
      if (ctx.hasUI) {
        const ok = await askNo(ctx, `Approve MCP server ${name} for this project?\n\n${preview.preview.trimEnd()}`, `Yes, approve ${name}`);
        if (!ok) {
          out.info(`piagent: ${name} was not approved`);
          return;
        }
      } else {
        out.info(preview.preview.trimEnd());
      }
      // Consent covers exactly the preview shown: --digest makes the CLI
      // refuse if anything changed since.
      const done = await runJson<Answer>(out, project, "approve", [name, ...extra, "--yes", "--digest", digest, "--json"]);
      if (done) await changed(ctx, out, project, deps, done);
      return;
    }
    default: {
      if (!sub.changes) {
        // What only a person reads (list, get, doctor, notice) is shown as printed.
        show(out, await runCli(project, sub.name, args));
        return;
      }
      const done = await runJson<Answer>(out, project, sub.name, [...args, "--json"]);
      if (done) await changed(ctx, out, project, deps, done);
      else await deps.cache.refresh(project).catch(() => undefined);
    }
  }
}

/** approve --dry-run --json, and approve --tools --json (ops.Preview in internal/ops). */
export interface Preview {
  action: string;
  server: string;
  project: string;
  state: string;
  approvalDigest?: string;
  dryRun: boolean;
  waiting?: boolean;
  accepted?: boolean;
  preview: string;
}

/** The --json answer of a verb that changes something (approve, reject, reset, enable, disable, remove). */
export interface Answer {
  action: string;
  server?: string;
  name?: string;
  project?: string;
  decision?: string;
  scope?: string;
  file?: string;
  changed?: boolean;
  dropped?: string[];
  stale?: boolean;
  notes?: string[];
}

/** The CLI's --json error (stderr, with the exit status). */
interface JsonError {
  message?: string;
  hints?: string[];
}

/**
 * Runs a verb with --json and returns its answer; a failure is shown (the
 * CLI's JSON error as its message and hints) and gives undefined.
 */
export async function runJson<T>(out: Output, project: string, sub: string, args: string[]): Promise<T | undefined> {
  const run = await runCli(project, sub, args);
  if (run.failure) {
    show(out, run);
    return undefined;
  }
  if (run.code === 0) {
    try {
      return JSON.parse(run.stdout) as T;
    } catch {
      out.error(`piagent: ${run.argv.slice(1, 3).join(" ")} answered without JSON: ${run.stdout.slice(0, 200)}`);
      return undefined;
    }
  }
  let e: JsonError | undefined;
  try {
    e = JSON.parse(run.stderr) as JsonError;
  } catch {
    // not the CLI's JSON error: shown as it is
  }
  if (!e?.message) {
    show(out, run);
    return undefined;
  }
  out.error([`piagent: error: ${e.message}`, ...(e.hints ?? []).map((h) => `piagent: hint: ${h}`)].join("\n"));
  return undefined;
}

/** What a change did, in a line: the answer's data in the command's words. */
export function resultOf(a: Answer): string {
  const who = a.server ?? a.name ?? "";
  switch (a.action) {
    case "approve":
    case "reject":
      return `${a.decision ?? a.action} ${who} for ${a.project}`;
    case "reset":
      if (a.stale) return `dropped the decisions of ${a.dropped?.length ?? 0} projects that no longer exist`;
      if (!a.dropped?.length) return who ? `no decision recorded for ${who} in ${a.project}` : `no decisions recorded for ${a.project}`;
      return who ? `forgot the decision for ${who} in ${a.project}` : `forgot every decision for ${a.project}`;
  }
  const past: Record<string, string> = { enable: "enabled", disable: "disabled", remove: "removed" };
  if (a.changed === false) return `${who}: no change (${a.action})`;
  return `${past[a.action] ?? a.action} ${who}${a.scope ? ` (scope ${a.scope})` : ""}`;
}

/** Says what a change did, with its notes, then refreshes and reloads. */
async function changed(ctx: ExtensionCommandContext, out: Output, project: string, deps: McpCommandDeps, a: Answer): Promise<void> {
  const result = resultOf(a);
  out.info([`piagent: ${result}`, ...(a.notes ?? []).map((n) => `note: ${n}`)].join("\n"));
  await afterChange(ctx, out, project, deps, result);
}

/** NO is the first and default answer of every consent dialog. */
export const NO = "No";

/**
 * Asks a yes-or-no question whose default is No: a consent dialog must not
 * be answered Yes by a stray Enter.
 */
export async function askNo(ctx: { ui: { select(title: string, options: string[]): Promise<string | undefined> } },
  title: string, yes: string): Promise<boolean> {
  const picked = await ctx.ui.select(title, [NO, yes]);
  return picked === yes;
}

/** After a decision or a configuration change: refresh, and reload under the launcher. */
/** Where the one-line result of a decision waits across the reload it causes. */
export const AFTER_RELOAD = Symbol.for("piagent.after-reload");

async function afterChange(ctx: ExtensionCommandContext, out: Output, project: string, deps: McpCommandDeps, result?: string): Promise<void> {
  await deps.cache.refresh(project).catch(() => undefined);
  // `piagent pi` (issue 6) starts Pi with PIAGENT_LAUNCHER=1 and a generated
  // exclusive config; the CLI rewrites that file when the decision changes, and
  // the adapter only sees it after a reload.
  if (process.env.PIAGENT_LAUNCHER === "1" && typeof ctx.reload === "function") {
    // The reload clears the screen's messages: carry the result over, so
    // the notice after it says what was done.
    if (result) (globalThis as { [AFTER_RELOAD]?: string })[AFTER_RELOAD] = `piagent: ${result}`;
    out.info("piagent: reloading so the MCP adapter sees the change");
    await ctx.reload();
  }
}

/** Asks which server, only when more than one fits. */
async function pickServer(ctx: ExtensionCommandContext, out: Output, project: string, deps: McpCommandDeps,
  sub: Subcommand): Promise<string | undefined> {
  let st: GateState;
  try {
    st = await deps.cache.refresh(project);
  } catch (err) {
    out.error(`piagent: ${describeFailure(err)}`);
    return undefined;
  }
  const fits = st.servers.filter(sub.fits!);
  if (fits.length === 0) {
    out.info(`piagent: no server to ${sub.name} here`);
    return undefined;
  }
  if (!ctx.hasUI) {
    // Without a dialog the person names the server: nothing is chosen for them.
    out.error(`piagent: ${sub.name} needs a server name: ${fits.map((s) => s.name).join(", ")}\n` +
      `for example: /piagent-mcp ${sub.name} ${fits[0]!.name}`);
    return undefined;
  }
  if (fits.length === 1) return fits[0]!.name;
  const labels = fits.map((s) => `${s.name}  (${s.state})`);
  const picked = await ctx.ui.select(`${sub.name}: which server?`, labels);
  if (picked === undefined) return undefined;
  return fits[labels.indexOf(picked)]?.name;
}

/** The menu: only what the project's state makes useful. */
async function menu(ctx: ExtensionCommandContext, project: string, deps: McpCommandDeps):
  Promise<{ sub: Subcommand; args: string[] } | undefined> {
  const out = outputFor(ctx);
  let st: GateState | undefined;
  try {
    st = await deps.cache.refresh(project);
  } catch (err) {
    out.warn(`piagent: ${describeFailure(err)}; the menu shows only what needs no state`);
  }
  const entries: { label: string; sub: Subcommand }[] = [];
  for (const sub of SUBCOMMANDS) {
    if (sub.name === "notice" && !(st && st.notice.length > 0)) continue;
    let count = "";
    if (sub.fits) {
      if (!st) continue;
      const n = st.servers.filter(sub.fits).length;
      if (n === 0) continue;
      count = ` (${n})`;
    }
    entries.push({ label: `${sub.name} — ${sub.help}${count}`, sub });
  }
  const picked = await ctx.ui.select("piagent-mcp", entries.map((e) => e.label));
  const entry = entries.find((e) => e.label === picked);
  if (!entry) return undefined;
  const sub = entry.sub;
  if (sub.name === "add") {
    const line = await ctx.ui.input("piagent mcp add: NAME and flags", "NAME --url https://… | NAME --env K=${K} -- COMMAND ARGS…");
    if (!line || line.trim() === "") return undefined;
    return { sub, args: splitArgs(line) };
  }
  if (sub.fits) {
    const fits = st!.servers.filter(sub.fits);
    let name: string | undefined = fits[0]!.name;
    if (fits.length > 1) {
      const labels = fits.map((s) => `${s.name}  (${s.state})`);
      const chosen = await ctx.ui.select(`${sub.name}: which server?`, labels);
      if (chosen === undefined) return undefined;
      name = fits[labels.indexOf(chosen)]?.name;
    }
    if (!name) return undefined;
    return { sub, args: [name] };
  }
  return { sub, args: [] };
}

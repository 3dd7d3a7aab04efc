// policy.ts: the tool policy's two faces in Pi besides the gate itself.
//
//   /piagent-mode              the person's command: show the mode, and with a UI
//                              pick another; `/piagent-mode <mode>` switches this
//                              session (helper method `mode`). Without a UI it
//                              prints and never waits.
//   piagent_tool_policy_check  the model's tools: would this call be allowed?
//   piagent_exec_policy_check  Both ask the helper's `check`, the same Decide the
//                              gate runs, so an answer can never disagree with
//                              the gate.
//
// The policy tools only ask; they never run, read or write what they are
// asked about. That is why index.ts gates a call of them without their
// payload (see ownPolicyTool): the payload is a question, not an action.

import type { ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { AutocompleteItem } from "@earendil-works/pi-tui";
import type { TSchema } from "typebox";
import { fixInPi, outputFor, runPiagent, splitArgs } from "./command.ts";
import { type CheckAnswer, describeFailure, fixFor, type Guard, type ModeAnswer } from "./guard.ts";
import { HelperError } from "./helper.ts";

/** The modes, from the narrowest; each allows what the ones before it allow. */
export const MODES: { name: string; help: string }[] = [
  { name: "readOnly", help: "read, search and list files; MCP only to search and describe" },
  { name: "memory", help: "readOnly, plus writing memory notes" },
  { name: "docsWrite", help: "memory, plus editing docs, plans and reports" },
  { name: "sourceWrite", help: "docsWrite, plus editing source outside the protected paths" },
  { name: "ship", help: "sourceWrite, plus commit, push, publish and deploy, each confirmed by a person" },
];

const PERSIST_HINT =
  "`piagent policy mode <mode>` in a terminal keeps a choice for this project (stored under ~/.pi, never in the repository)";

function helpOf(mode: string): string {
  return MODES.find((m) => m.name === mode)?.help ?? "";
}

/** The mode names the helper knows, in order (ours when it sent none). */
function modeNames(answer: ModeAnswer | undefined): string[] {
  return answer && Array.isArray(answer.modes) && answer.modes.length > 0 ? answer.modes : MODES.map((m) => m.name);
}

/** Matches what the person typed to a mode name, ignoring case. */
export function matchMode(word: string, names: string[] = MODES.map((m) => m.name)): string | undefined {
  return names.find((n) => n === word) ?? names.find((n) => n.toLowerCase() === word.toLowerCase());
}

/** Completion for /piagent-mode: the mode names. */
export function modeCompletions(prefix: string): AutocompleteItem[] | null {
  const text = prefix.trimStart();
  if (/\s/.test(text)) return null;
  const items = MODES.filter((m) => m.name.toLowerCase().startsWith(text.toLowerCase())).map((m) => ({
    value: m.name,
    label: m.name,
    description: m.help,
  }));
  return items.length > 0 ? items : null;
}

/** The mode in effect and where it comes from, in words. */
export interface CurrentMode {
  mode: string;
  source: string;
}

/**
 * Where the helper's answer says the mode comes from. An empty mode means no
 * one chose one: the policy's default applies, which `piagent policy show`
 * names.
 */
async function currentMode(answer: ModeAnswer, project: string): Promise<CurrentMode> {
  const words: Record<string, string> = {
    session: "chosen for this session",
    project: "chosen for this project",
    default: "the policy's default",
    unreadable: "the mode store cannot be read: the narrowest mode",
  };
  if (answer.mode && answer.source && words[answer.source]) return { mode: answer.mode, source: words[answer.source]! };
  if (answer.mode && (answer.session || answer.source === undefined)) {
    return { mode: answer.mode, source: answer.session ? "chosen for this session" : "chosen for this project" };
  }
  const run = await runPiagent(project, ["policy", "show", "--json", "--project", project]);
  try {
    const shown = JSON.parse(run.stdout) as { mode?: unknown };
    if (typeof shown.mode === "string" && shown.mode !== "") return { mode: shown.mode, source: "the policy's default" };
  } catch {
    // fall through: the mode is the default, whatever it is
  }
  return { mode: "", source: "the policy's default" };
}

/** The text /piagent-mode prints: the mode, the list, how to change it. */
export function modeText(cur: CurrentMode, names: string[]): string {
  const w = Math.max(...names.map((n) => n.length));
  const lines = [`piagent: mode ${cur.mode || "(the policy's default)"} (${cur.source})`];
  for (const n of names) lines.push(`${n === cur.mode ? "*" : " "} ${n.padEnd(w)}  ${helpOf(n)}`);
  lines.push(`/piagent-mode <mode> switches this session; ${PERSIST_HINT}.`);
  return lines.join("\n");
}

export interface ModeCommandDeps {
  guard: Guard;
  project(ctx: ExtensionCommandContext): string;
}

/** The handler of /piagent-mode. */
export async function handleModeCommand(args: string, ctx: ExtensionCommandContext, deps: ModeCommandDeps): Promise<void> {
  const out = outputFor(ctx);
  const project = deps.project(ctx);
  const words = splitArgs(args);
  if (words.length > 1) {
    out.error(`piagent: /piagent-mode takes one mode: ${MODES.map((m) => m.name).join(", ")}`);
    return;
  }

  let answer: ModeAnswer;
  try {
    answer = await deps.guard.mode(project);
  } catch (err) {
    out.error(`piagent: cannot show the mode: ${describeFailure(err)}. To fix: ${fixFor(err)}.`);
    return;
  }
  const names = modeNames(answer);

  let target: string | undefined;
  if (words.length === 1) {
    target = matchMode(words[0]!, names);
    if (!target) {
      out.error(`piagent: unknown mode ${JSON.stringify(words[0])}; the modes are ${names.join(", ")}`);
      return;
    }
  } else {
    const cur = await currentMode(answer, project);
    if (!ctx.hasUI) {
      // No one can answer a menu: print and return.
      out.info(modeText(cur, names));
      return;
    }
    const labels = names.map((n) => `${n}${n === cur.mode ? " (current)" : ""} — ${helpOf(n)}`);
    const picked = await ctx.ui.select(`piagent-mode: ${cur.mode || "default"} (${cur.source}); switch this session to`, labels);
    if (picked === undefined) return;
    target = names[labels.indexOf(picked)];
    if (!target) return;
    if (target === cur.mode && answer.session) {
      out.info(`piagent: mode ${target} (unchanged)`);
      return;
    }
  }

  try {
    const set = await deps.guard.mode(project, target);
    out.info(`piagent: mode ${set.mode || target} for this session: ${helpOf(target)}.\n` +
      `It lasts until Pi exits; ${PERSIST_HINT}.`);
  } catch (err) {
    out.error(`piagent: the mode was not changed: ${describeFailure(err)}`);
  }
}

// ---- the model's policy tools ----

export const TOOL_POLICY_CHECK = "piagent_tool_policy_check";
export const EXEC_POLICY_CHECK = "piagent_exec_policy_check";

/**
 * The parameter schemas, as plain JSON Schema (Pi validates either TypeBox or
 * JSON Schema; plain objects keep the package free of runtime dependencies).
 * index.ts recognises our own tools by these objects' identity.
 */
export const TOOL_CHECK_PARAMS = {
  type: "object",
  properties: {
    toolName: { type: "string", description: "The tool you would call, e.g. read, write, bash, grep, mcp" },
    input: {
      type: "object",
      description: "The arguments you would pass to it, e.g. {\"path\": \"src/a.ts\"}",
      additionalProperties: true,
    },
  },
  required: ["toolName", "input"],
} as const;

export const EXEC_CHECK_PARAMS = {
  type: "object",
  properties: {
    command: { type: "string", description: "The shell command you would run with the bash tool" },
  },
  required: ["command"],
} as const;

/** The decision as the model reads it. */
export function checkText(call: { toolName: string }, d: CheckAnswer): string {
  const lines = [`piagent policy check of ${call.toolName}: ${d.action}`];
  lines.push(`code: ${d.code || "(none)"}`);
  if (d.rule) lines.push(`rule: ${d.rule}`);
  if (d.subject) lines.push(`subject: ${d.subject}`);
  if (d.server) lines.push(`server: ${d.server}${d.state ? ` (${d.state})` : ""}`);
  if (d.reason) lines.push(`reason: ${d.reason}`);
  switch (d.action) {
    case "allow":
      lines.push("The call would run.");
      break;
    case "warn":
      lines.push("The call would run; piagent warns about this tool once per session.");
      break;
    case "confirm":
      lines.push("The call would run only after a person confirms it; where no one can be asked, it is blocked.");
      break;
    default:
      lines.push("The call would be blocked. Do not try to reach the same thing another way.");
  }
  const fix = fixInPi(d.fix);
  if (fix) lines.push(fix.includes("\n") ? `A person can allow it with:\n${fix}` : `A person can allow it with: ${fix}`);
  return lines.join("\n");
}

type CheckResult = { content: { type: "text"; text: string }[]; details: Record<string, unknown> };

/** Asks the helper about one call; a failure answers "blocked". */
export async function answerCheck(guard: Guard, project: string, call: { toolName: string; input: unknown }): Promise<CheckResult> {
  let d: CheckAnswer;
  try {
    d = await guard.check(project, call);
    if (!d || typeof d.action !== "string") throw new HelperError("bad-result", "check answered without an action");
  } catch (err) {
    const code = err instanceof HelperError ? "check-failed" : "helper-unavailable";
    d = {
      action: "block",
      code,
      reason: `${describeFailure(err)}; while it cannot answer, every tool call is blocked`,
    };
  }
  const details: Record<string, unknown> = { toolName: call.toolName };
  for (const k of ["action", "code", "rule", "subject", "reason", "server", "state", "fix"] as const) {
    if (d[k] !== undefined && d[k] !== "") details[k] = d[k];
  }
  return { content: [{ type: "text", text: checkText(call, d) }], details };
}

/** The tool definitions; project names the session's project. */
export function policyTools(guard: Guard, project: (ctx: ExtensionContext | undefined) => string) {
  return [
    {
      name: TOOL_POLICY_CHECK,
      label: "piagent policy check",
      description:
        "Ask piagent's tool policy whether a tool call would be allowed, blocked or need a person's confirmation, " +
        "without making it. The answer comes from the same engine that gates every call: protected paths, " +
        "MCP approval, the tool registry and the current mode.",
      promptSnippet: "Ask whether piagent's policy would allow a tool call, without making it",
      parameters: TOOL_CHECK_PARAMS as unknown as TSchema,
      prepareArguments: (args: unknown) => {
        // Models sometimes send the input as a JSON string.
        const a = (args && typeof args === "object" ? { ...(args as Record<string, unknown>) } : {}) as Record<string, unknown>;
        if (typeof a.input === "string") {
          try {
            const parsed = JSON.parse(a.input);
            if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) a.input = parsed;
          } catch {
            // left as is: validation names the problem
          }
        }
        return a as never;
      },
      async execute(_id: string, params: { toolName: string; input: Record<string, unknown> }, _signal: unknown,
        _onUpdate: unknown, ctx: ExtensionContext) {
        return answerCheck(guard, project(ctx), { toolName: String(params.toolName ?? ""), input: params.input ?? {} });
      },
    },
    {
      name: EXEC_POLICY_CHECK,
      label: "piagent exec policy check",
      description:
        "Ask piagent's tool policy whether a shell command would be allowed in the bash tool, blocked, or need a " +
        "person's confirmation, without running it. The same shell analysis gates every bash call.",
      promptSnippet: "Ask whether piagent's policy would allow a shell command, without running it",
      parameters: EXEC_CHECK_PARAMS as unknown as TSchema,
      async execute(_id: string, params: { command: string }, _signal: unknown, _onUpdate: unknown, ctx: ExtensionContext) {
        return answerCheck(guard, project(ctx), { toolName: "bash", input: { command: String(params.command ?? "") } });
      },
    },
  ];
}

/** The schemas of our own policy tools, by name (see ownPolicyTool in index.ts). */
export const OWN_SCHEMAS: ReadonlyMap<string, object> = new Map<string, object>([
  [TOOL_POLICY_CHECK, TOOL_CHECK_PARAMS],
  [EXEC_POLICY_CHECK, EXEC_CHECK_PARAMS],
]);

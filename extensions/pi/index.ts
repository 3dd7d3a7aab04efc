// piagent's Pi extension. It is deliberately thin: every decision comes from
// the Go helper (`piagent guard serve`, docs/helper-protocol.md), started once
// per session and asked on every tool call. What this file owns is the
// fail-closed rule: when the helper cannot answer, a tool call is blocked, a
// result is withheld and a broker request is denied.
//
// What it registers:
//   tool_call      decide: block, confirm (ask the person, or block without a UI), warn once, allow
//   tool_result    redact: the helper's content, or the output withheld when it cannot be checked
//   before_provider_request
//                  withhold: the declarations (and codemode sections) of tools the helper says
//                  no person accepted are taken out of every request (all of a server's when the
//                  helper cannot answer); one it cannot clean is not sent (withhold.ts)
//   broker         pi-mcp-adapter:tool-approval-request, a second layer for mcpScript and UI iframes
//   session_start  the session notice from `state`
//   /piagent-mcp   approve, reject, … as a person's act (command.ts)
//   /piagent-mode  show and switch the tool-policy mode (policy.ts)
//   piagent_tool_policy_check, piagent_exec_policy_check
//                  the model asks the helper's `check`: the gate's own engine (policy.ts)
//   project_trust  a yes that would admit unapproved .pi/mcp.json servers is the person's, said so
//   /mcp           only when pi-mcp-adapter does not load: Pi (≥ 0.99) then leaves its
//                  built-in MCP client out, which would start servers no one approved
//
// Only type imports from Pi's packages: jiti erases them, so the package has
// no runtime dependencies.

import type {
  BeforeProviderRequestEvent,
  ExtensionAPI,
  ExtensionCommandContext,
  ExtensionContext,
  ProjectTrustContext,
  ProjectTrustEvent,
  ProjectTrustEventResult,
  SessionStartEvent,
  ToolCallEvent,
  ToolCallEventResult,
  ToolResultEvent,
  ToolResultEventResult,
} from "@earendil-works/pi-coding-agent";
import { AFTER_RELOAD, askNo, completions, fixInPi, handleMcpCommand, NO, noticeInPi, StateCache } from "./command.ts";
import {
  blockReason,
  type ContentPart,
  describeFailure,
  fixFor,
  type GateState,
  Guard,
  type HostAnswer,
  type ReportedTool,
  type ServerState,
  unavailableReason,
  withheldText,
} from "./guard.ts";
import { InFlight } from "./batch.ts";
import { HelperError, startTimeoutMs } from "./helper.ts";
import { handleModeCommand, modeCompletions, OWN_SCHEMAS, policyTools } from "./policy.ts";
import { type SandboxBinary, sandboxedOperations } from "./sandbox.ts";
import { DISCOVERY_GLOBALS, type FirstSeen, unsendable, type WithheldTool, type Withholding, withholdFromPayload, withholding } from "./withhold.ts";

/**
 * Where a session's mode waits across a reload: Pi runs this factory again
 * (under the launcher, after every /piagent-mcp decision) in the same
 * process, and the mode the person chose must not silently fall back to a
 * wider one.
 */
const CARRIED_MODE = Symbol.for("piagent.session-mode");

/** Whether this process's first load took /mcp from Pi's built-in MCP client. */
const STEP_ASIDE = Symbol.for("piagent.step-aside");
type Carrier = { [CARRIED_MODE]?: string };

/** Every string in a JSON value, depth first, keys in order. */
export function collectStrings(v: unknown, out: string[]): void {
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) for (const e of v) collectStrings(e, out);
  else if (v && typeof v === "object") for (const e of Object.values(v)) collectStrings(e, out);
}

/** v with its strings replaced, in collectStrings' order, by next. */
export function replaceStrings(v: unknown, next: string[], at = { i: 0 }): unknown {
  if (typeof v === "string") return next[at.i++];
  if (Array.isArray(v)) return v.map((e) => replaceStrings(e, next, at));
  if (v && typeof v === "object") {
    const o: Record<string, unknown> = {};
    for (const [k, e] of Object.entries(v)) o[k] = replaceStrings(e, next, at);
    return o;
  }
  return v;
}

/** What /mcp says when piagent took the name from Pi's built-in MCP client. */
export const STEPPED_ASIDE =
  "piagent: Pi's built-in MCP client is kept out of this session, because it would start MCP servers that no one here approved. " +
  "Use /piagent-mcp to see and approve servers. To use them in Pi, run 'piagent setup', which installs pi-mcp-adapter, then start Pi with 'piagent pi'.";

/** What the session notice says when Pi's built-in MCP client loaded anyway. */
export const BUILTIN_LOADED =
  "piagent: Pi's built-in MCP client is loaded in this session (pi-mcp-adapter was expected but did not take its place, or Pi was started with builtin:mcp). " +
  "It may already have started MCP servers that no one approved; piagent blocks calls to them, but cannot stop the processes. " +
  "Quit and start Pi with 'piagent pi', or run 'piagent-mcp doctor' in a terminal.";

/** Answers of piagent's own trust question (the first, NO, is the default). */
export const TRUST_SESSION = "Yes, trust it for this session";
export const TRUST_REMEMBER = "Yes, trust it and remember";

/** States in which a repository server has not been approved here. */
const UNAPPROVED = new Set(["pending-approval", "approval-changed", "rejected"]);

/** The project's .pi/mcp.json servers that no one here approved. */
export function unapprovedPiProject(st: GateState): ServerState[] {
  return (st?.servers ?? []).filter((s) => s.repositoryControlled && s.scope === "pi-project" && UNAPPROVED.has(s.state));
}

/** piagent's trust question, naming what a yes would admit. */
export function trustQuestion(cwd: string, names: string): string {
  return `Trust project folder?\n${cwd}\n\n` +
    `piagent: its .pi/mcp.json declares MCP servers that no one on this machine approved: ${names}. ` +
    "Trusting it lets Pi's own MCP client (pi mcp list, pi mcp login, and Pi without pi-mcp-adapter) start them without asking piagent, " +
    "and lets Pi load the project's settings and extensions. " +
    `Review them first: /piagent-mcp get NAME, then /piagent-mcp approve NAME (or piagent-mcp in a terminal).`;
}

/** The notice for a project already trusted that declares unapproved servers. */
export function trustedWarning(names: string, from: string): string {
  return `piagent: this project is trusted (Pi's trust.json, entry for ${from}), and its .pi/mcp.json declares MCP servers no one here approved: ${names}. ` +
    "Pi's own 'pi mcp list' and 'pi mcp login' would start them without asking piagent; review them with /piagent-mcp get NAME.";
}

/** The adapter's approval-broker event (pi-mcp-adapter 2.36 types.ts). */
const TOOL_APPROVAL_REQUEST_EVENT = "pi-mcp-adapter:tool-approval-request";

type BrokerDecision = "allow_once" | "allow_for_session" | "deny" | "abstain";

/** The adapter's McpToolApprovalRequest, as far as we read it. */
interface ToolApprovalRequest {
  requestId?: string;
  serverName: string;
  originalToolName?: string;
  prefixedToolName?: string;
  origin?: string;
  signal?: AbortSignal;
  claim(handler: () => BrokerDecision | Promise<BrokerDecision>): boolean;
}

/**
 * What of a result's details survives redaction: the adapter's `error` code,
 * which its own tool_result handler reads to mark MCP failures as errors.
 */
function keptDetails(details: unknown, removed: number): Record<string, unknown> {
  const out: Record<string, unknown> = { piagent: removed > 0 ? { redacted: removed } : { withheld: true } };
  if (details && typeof details === "object" && typeof (details as { error?: unknown }).error === "string") {
    out.error = (details as { error: string }).error;
  }
  return out;
}

/** What to do after the extension itself failed on a call. */
const RETRY_HINT = "Try again; if it keeps happening, run `piagent mcp doctor` in a terminal and reinstall the extension: pi install \"$(piagent extension path)\"";

function errorText(err: unknown): string {
  try {
    return err instanceof Error ? err.message : String(err);
  } catch {
    return "an error that cannot be shown";
  }
}

/**
 * What the handlers of one load of the extension share: the helper's
 * client (guard) and state cache, the latest context (the broker's event
 * carries none), the messages shown once per session, whether the person
 * was told the helper is down, and what was last reported of the built-in
 * client's tools. Each event has its handler below, with this as its first
 * argument; the factory only wires them.
 */
class Session {
  readonly pi: ExtensionAPI;
  readonly guard = new Guard();
  readonly cache: StateCache;
  /** The latest context, for the broker (its event carries none). */
  lastCtx: ExtensionContext | undefined;
  /** Messages shown once per session (warn decisions, broker denials). */
  readonly shown = new Set<string>();
  /** Whether the person was told that the helper is down (reset when it answers). */
  toldDown = false;
  /** What was last reported of the built-in client's tools, and to which helper. */
  lastReport = "";
  /** Commands and file tools allowed and not yet ended (batch.ts). */
  readonly inFlight = new InFlight();

  constructor(pi: ExtensionAPI) {
    this.pi = pi;
    const carrier = globalThis as Carrier;
    this.guard.onModeChange = (mode) => {
      if (mode === undefined) delete carrier[CARRIED_MODE];
      else carrier[CARRIED_MODE] = mode;
    };
    this.cache = new StateCache(this.guard);
  }
}

const projectOf = (ctx: ExtensionContext | undefined): string => ctx?.cwd || process.cwd();

function tell(ctx: ExtensionContext | undefined, text: string, level: "info" | "warning" | "error"): void {
  if (ctx?.hasUI) {
    try {
      ctx.ui.notify(text, level);
      return;
    } catch {
      // a stale context after a reload: fall through to stderr
    }
  }
  process.stderr.write(text.endsWith("\n") ? text : text + "\n");
}

function once(s: Session, ctx: ExtensionContext | undefined, key: string, text: string, level: "info" | "warning" | "error"): void {
  if (s.shown.has(key)) return;
  s.shown.add(key);
  tell(ctx, text, level);
}

function helperDown(s: Session, ctx: ExtensionContext | undefined, err: unknown): void {
  if (s.toldDown) return;
  s.toldDown = true;
  tell(ctx, unavailableReason(err), "error");
}

function sourcePathOf(s: Session, toolName: string): string | undefined {
  try {
    return s.pi.getAllTools().find((t) => t.name === toolName)?.sourceInfo?.path;
  } catch {
    return undefined;
  }
}

/**
 * Whether the tool Pi runs under this name is one of our policy tools. The
 * schema object is ours alone, and Pi hands it back by identity, so a tool
 * of another extension that merely takes the name does not qualify.
 */
function ownPolicyTool(s: Session, toolName: string): boolean {
  const schema = OWN_SCHEMAS.get(toolName);
  if (!schema) return false;
  try {
    return s.pi.getAllTools().find((t) => t.name === toolName)?.parameters === schema;
  } catch {
    return false;
  }
}

/** session_start: the mode carried across a reload, the session notice, changed tools taken out of the active list. */
async function onSessionStart(s: Session, event: SessionStartEvent | undefined, ctx: ExtensionContext): Promise<void> {
  const carrier = globalThis as Carrier;
  s.lastCtx = ctx;
  if (builtinMcpLoaded(s)) tell(ctx, BUILTIN_LOADED, "error");
  // A mode chosen with /piagent-mode lasts for one session, reloads included.
  const carried = carrier[CARRIED_MODE];
  if (event?.reason === "reload") {
    if (carried !== undefined && s.guard.chosen === undefined) s.guard.restoreMode(carried);
  } else {
    s.guard.forgetMode();
    delete carrier[CARRIED_MODE];
  }
  s.shown.clear();
  s.lastReport = "";
  s.toldDown = false;
  // What the decision that caused this reload did, said once more.
  const done = (carrier as { [AFTER_RELOAD]?: string })[AFTER_RELOAD];
  if (event?.reason === "reload" && done) tell(ctx, done, "info");
  delete (carrier as { [AFTER_RELOAD]?: string })[AFTER_RELOAD];
  try {
    const st = await s.cache.refresh(projectOf(ctx));
    // PIAGENT_NO_MCP_NOTICE=1 empties notice on the Go side.
    if (st.notice.length > 0) tell(ctx, noticeInPi(st.notice), "warning");
    // Tools whose description or schema changed since pinned are not
    // declared to the model (their calls are blocked as well).
    const hidden = new Set(st.hiddenTools ?? []);
    if (hidden.size > 0) {
      try {
        const active = s.pi.getActiveTools();
        const kept = active.filter((n) => !hidden.has(n));
        if (kept.length !== active.length) s.pi.setActiveTools(kept);
      } catch {
        // an older Pi without the active-tool API: the calls stay blocked
      }
    }
  } catch (err) {
    helperDown(s, ctx, err);
  }
}

/**
 * Pi's built-in MCP client writes no catalogue file: what it registered
 * (pi.getAllTools(), with MCP annotations on Pi 1.6) is reported to the
 * helper, which pins it at first sight and compares it after, before a
 * call of one of its tools is decided.
 */
async function reportBuiltin(s: Session, project: string): Promise<void> {
  const tools: ReportedTool[] = [];
  for (const t of s.pi.getAllTools() as any[]) {
    if (!String(t?.sourceInfo?.path ?? "").startsWith("builtin:") || !String(t?.name ?? "").startsWith("mcp__")) continue;
    tools.push({ name: t.name, description: t.description, parameters: t.parameters, annotations: t.annotations });
  }
  await s.guard.client.start(project);
  const key = `${s.guard.client.handshake?.pid}\u0000${JSON.stringify(tools)}`; // a restarted helper is told again
  if (key === s.lastReport) return;
  await s.guard.report(project, tools);
  s.lastReport = key;
}

/**
 * Pi's tools, and those a server could supply (named mcp__…, or from the
 * adapter's or the built-in client's source): what the helper is asked
 * about.
 */
function serverTools(s: Session): { all: any[]; offered: { name: string; sourcePath?: string }[] } {
  const all = s.pi.getAllTools() as any[];
  const adapterPath = all.find((t) => t?.name === "mcp")?.sourceInfo?.path;
  const offered = all
    .filter((t) => {
      const path = String(t?.sourceInfo?.path ?? "");
      return String(t?.name ?? "").startsWith("mcp__") || (adapterPath !== undefined && path === adapterPath) || path === "builtin:mcp";
    })
    .map((t) => ({ name: String(t.name), sourcePath: t?.sourceInfo?.path as string | undefined }));
  return { all, offered };
}

/**
 * The tools the model must not be shown now, with what Pi would tell it
 * of them: the helper decides from every tool a server supplies (the
 * built-in client's are reported first, so a changed one is compared
 * before the model reads it). Nothing is asked when no tool could be a
 * server's. Throws when the helper cannot answer.
 */
async function withheldNow(s: Session, project: string): Promise<{ tools: WithheldTool[]; w: Withholding; first: FirstSeen[] }> {
  const { all, offered } = serverTools(s);
  if (offered.length === 0) return { tools: [], w: withholding([], []), first: [] };
  if (all.some((t) => String(t?.sourceInfo?.path ?? "").startsWith("builtin:") && String(t?.name ?? "").startsWith("mcp__"))) {
    await reportBuiltin(s, project);
  }
  const a = await s.guard.withheld(project, offered);
  if (!a || !Array.isArray(a.withheld)) throw new HelperError("bad-result", "withheld answered without a list");
  return { tools: a.withheld, w: withholding(a.withheld, all), first: Array.isArray(a.firstSight) ? a.firstSight : [] };
}

// Issue 39, item 1: the model never reads a description no person has
// accepted. Pi's active-tool list cannot promise it on Pi 1.6 (deferred
// and codemode tools stay listed and searchable), so every request is
// rewritten on its way out, on both Pis, and re-evaluated each time (a
// server that reconnects mid-session with a changed catalogue is
// withheld from the next one).
async function onProviderRequest(s: Session, event: BeforeProviderRequestEvent, ctx: ExtensionContext) {
  try {
    return await withholdRequest(s, event, ctx);
  } catch (err) {
    return unsendable(`piagent: this request to the model was not sent because the extension failed while checking it (${errorText(err)}). ${RETRY_HINT}`);
  }
}

async function withholdRequest(s: Session, event: { payload: unknown }, ctx: ExtensionContext) {
  const project = projectOf(ctx);
  let now;
  try {
    now = await withheldNow(s, project);
  } catch (err) {
    if (!(err instanceof HelperError)) helperDown(s, ctx, err);
    // Which descriptions a person accepted cannot be told: every tool a
    // server supplies is withheld (and codemode's listing with them), as
    // every call is blocked, and the session goes on without them.
    let all: any[] = [];
    let offered: { name: string }[] = [];
    try {
      ({ all, offered } = serverTools(s));
    } catch {
      // no tool list: nothing is known to take out, so nothing is sent
      return unsendable(`piagent: this request to the model was not sent: ${describeFailure(err)}, and Pi's tool list cannot be read. To fix: ${fixFor(err)}.`);
    }
    const w = withholding(offered, all);
    w.boundaryInText = true;
    const r = withholdFromPayload(event.payload, w);
    if (r.leak !== undefined) {
      return unsendable(`piagent: this request to the model was not sent: ${describeFailure(err)}, and a server's tool description could not be taken out of it. To fix: ${fixFor(err)}.`);
    }
    return r.removed > 0 ? r.payload : undefined;
  }
  // What was pinned at first sight is shown to the person before the
  // model reads it (issue 39, item 4).
  for (const f of now.first) {
    tell(ctx, `piagent: MCP server ${f.server} was seen for the first time; what it offers the model is pinned as:\n  ${f.tools.join("\n  ")}\n` +
      `A later change is blocked until a person accepts it. Review: /piagent-mcp get ${f.server}`, "info");
  }
  if (now.tools.length === 0) return undefined;
  const r = withholdFromPayload(event.payload, now.w);
  if (r.leak !== undefined) {
    const names = now.tools.map((t) => t.name).join(", ");
    const fix = fixInPi(now.tools.find((t) => t.fix)?.fix) || "/piagent-mcp approve SERVER --tools";
    return unsendable(`piagent: this request to the model was not sent: it still carries the description of ${names}, which no person has accepted (a request shape piagent does not know). Review with /piagent-mcp get SERVER and accept with ${fix}.`);
  }
  for (const t of now.tools) {
    once(s, ctx, `withheld\u0000${t.name}\u0000${t.reason ?? ""}`, `piagent: ${t.name} is withheld from the model: ${t.reason ?? t.code ?? "no person has accepted it"}`, "warning");
  }
  return r.removed > 0 ? r.payload : undefined;
}

// Whatever fails inside a handler is answered here, closed: a call is
// blocked and a result withheld, with the reason, and nothing is thrown
// into Pi.
async function guardedToolCall(s: Session, event: ToolCallEvent, ctx: ExtensionContext): Promise<ToolCallEventResult | undefined> {
  try {
    return await onToolCall(s, event, ctx);
  } catch (err) {
    return { block: true, reason: `piagent: this call was blocked because the extension failed while checking it (${errorText(err)}). ${RETRY_HINT}` };
  }
}

async function guardedToolResult(s: Session, event: ToolResultEvent, ctx: ExtensionContext): Promise<ToolResultEventResult | undefined> {
  try {
    return await onToolResult(s, event, ctx);
  } catch (err) {
    return {
      content: [{ type: "text" as const, text: `piagent: this tool's output was withheld because the extension failed while checking it (${errorText(err)}). The tool itself did run. ${RETRY_HINT}` }],
      details: {},
      isError: true,
    };
  }
}

async function onToolCall(s: Session, event: ToolCallEvent, ctx: ExtensionContext): Promise<ToolCallEventResult | undefined> {
  s.lastCtx = ctx;
  const clash = s.inFlight.clash(event.toolName);
  if (clash !== undefined) return { block: true, reason: clash };
  // A codemode script that lists or describes tools reads withheld
  // descriptions as easily as any other.
  if (event.toolName === "codemode" && DISCOVERY_GLOBALS.test(String((event.input as { code?: unknown })?.code ?? ""))) {
    try {
      const now = await withheldNow(s, projectOf(ctx));
      const t = now.tools[0];
      if (t !== undefined) {
        return {
          block: true,
          reason: `piagent: blocked: this codemode script uses searchTools, describeTool, describeNamespace or ALL_TOOLS, which would show it ${now.tools.map((x) => x.name).join(", ")}, withheld from the model (${t.reason ?? t.code}); call the tools you need by name, or have a person accept them with ${fixInPi(t.fix) || "/piagent-mcp approve SERVER --tools"}`,
        };
      }
    } catch (err) {
      if (!(err instanceof HelperError)) helperDown(s, ctx, err);
      return { block: true, reason: unavailableReason(err) };
    }
  }
  let d;
  const sourcePath = sourcePathOf(s, event.toolName);
  try {
    if (event.toolName.startsWith("mcp__") && (sourcePath ?? "").startsWith("builtin:")) {
      await reportBuiltin(s, projectOf(ctx));
    }
    d = await s.guard.decide(projectOf(ctx), {
      toolName: event.toolName,
      // Our policy tools only ask a question: the call they describe is data,
      // which `check` judges when they run. Gated with their payload, asking
      // about `git push` would need a person's confirmation and asking about
      // `.env` would be blocked as a read of it. They still pass the gate
      // (full blocks, registry, mode) like any call.
      input: ownPolicyTool(s, event.toolName) ? {} : event.input,
      sourcePath,
    });
  } catch (err) {
    if (!(err instanceof HelperError)) helperDown(s, ctx, err);
    return { block: true, reason: unavailableReason(err) };
  }
  s.toldDown = false;
  switch (d?.action) {
    case "allow":
      break;
    case "warn":
      once(s, ctx, `warn\u0000${d.reason}`, blockReason(d), "warning");
      break;
    case "confirm": {
      const reason = blockReason(d);
      if (!ctx.hasUI) {
        return { block: true, reason: `${reason}\n(piagent asks a person to confirm this call; there is no UI in this mode to ask.)` };
      }
      const ok = await askNo(ctx, `piagent: allow ${event.toolName}?\n\n${reason}`, `Yes, allow this ${event.toolName} call`);
      if (!ok) return { block: true, reason: `${reason}\n(A person declined this call.)` };
      break;
    }
    case "block":
      return { block: true, reason: blockReason(d) };
    default:
      return {
        block: true,
        reason: `piagent: the guard helper gave an answer this extension does not know (${JSON.stringify(d?.action)}); ` +
          `the call is blocked. Install the extension that matches the binary: pi install "$(piagent extension path)"`,
      };
  }
  s.inFlight.admit(event.toolCallId, event.toolName);
  return undefined;
}

async function onToolResult(s: Session, event: ToolResultEvent, ctx: ExtensionContext): Promise<ToolResultEventResult | undefined> {
  s.lastCtx = ctx;
  const content = event.content as ContentPart[];
  // Pi 1.6: a tool with an outputSchema also hands codemode scripts (and
  // so the model) structuredContent. Its strings go to the helper as more
  // text parts, after the content's, and come back in place.
  const structured = (event as { structuredContent?: unknown }).structuredContent;
  const leaves: string[] = [];
  collectStrings(structured, leaves);
  const parts: ContentPart[] = [...(Array.isArray(content) ? content : []), ...leaves.map((text) => ({ type: "text", text }))];
  // Parts that are not text pass through the helper unchanged: nothing to ask.
  if (!parts.some((p) => p?.type === "text")) return undefined;
  try {
    const r = await s.guard.redact(projectOf(ctx), {
      toolName: event.toolName,
      input: event.input,
      content: parts,
    });
    if (!r || !Array.isArray(r.content) || r.content.length !== parts.length) {
      throw new HelperError("bad-result", "redact answered without the parts it was given");
    }
    if (r.removed === 0) return undefined;
    const n = parts.length - leaves.length;
    const out: { content: typeof event.content; details: unknown; structuredContent?: unknown } = {
      content: r.content.slice(0, n) as typeof event.content,
      // details can carry the raw result too (the adapter keeps mcpResult
      // there), and Pi writes details to the session file and the event
      // stream: keep only the adapter's error signal.
      details: keptDetails(event.details, r.removed),
    };
    if (structured !== undefined) {
      const redacted = r.content.slice(n).map((p) => (p as { text?: unknown }).text);
      if (redacted.every((t) => typeof t === "string")) out.structuredContent = replaceStrings(structured, redacted as string[]);
      // else left out: Pi drops structuredContent that is not returned
    }
    return out as any;
  } catch (err) {
    // Pi does not block on a failing result handler: withholding is the
    // closed path (and structuredContent, not returned, is dropped).
    if (!(err instanceof HelperError)) helperDown(s, ctx, err);
    return {
      content: [{ type: "text" as const, text: withheldText(err) }],
      details: keptDetails(event.details, 0),
      isError: true,
    };
  }
}

/** The adapter's approval broker: the first synchronous claim wins. */
function onApprovalRequest(s: Session, data: unknown): void {
  const req = data as ToolApprovalRequest;
  if (!req || typeof req.claim !== "function") return;
  const ctx = s.lastCtx;
  // The first synchronous claim wins, so claim before anything is awaited.
  req.claim(async (): Promise<BrokerDecision> => {
    try {
      const a = await s.guard.broker(projectOf(ctx), {
        serverName: req.serverName,
        originalToolName: req.originalToolName,
        origin: req.origin,
      });
      if (a?.action === "allow") return "allow_once";
      const why = a?.reason || "the guard did not allow it";
      once(s, ctx, `broker\u0000${req.serverName}\u0000${why}`,
        `piagent: denied an MCP call to ${req.serverName} (${req.origin ?? "call"}): ${why}`, "warning");
      return "deny";
    } catch (err) {
      once(s, ctx, `broker-down\u0000${req.serverName}`,
        `piagent: denied an MCP call to ${req.serverName}: ${describeFailure(err)}. To fix: ${fixFor(err)}.`, "error");
      return "deny";
    }
  });
}

// Pi asks whether to trust a project before it loads the project's
// settings, extensions and .pi/mcp.json. Trust is what lets Pi's own MCP
// client and `pi mcp list` start the project's servers, and a remembered
// yes outlives this session. When the project declares servers no one on
// this machine approved and nobody has decided its trust yet, piagent asks
// the question itself, naming them, with "No" first; in every other case
// it leaves the decision to Pi (the store's entry, or Pi's own prompt).
async function onProjectTrust(s: Session, event: ProjectTrustEvent | undefined, ctx: ProjectTrustContext): Promise<ProjectTrustEventResult> {
  const cwd = event?.cwd || process.cwd();
  let st: GateState;
  let host: HostAnswer;
  try {
    [st, host] = await Promise.all([s.guard.state(cwd), s.guard.host(cwd, process.argv.slice(2))]);
  } catch (err) {
    // piagent cannot tell which servers trust would admit: no.
    try {
      ctx.ui.notify(`piagent: this project is not trusted for this session: ${describeFailure(err)}. To fix: ${fixFor(err)}.`, "error");
    } catch {
      process.stderr.write(`piagent: this project is not trusted for this session: ${describeFailure(err)}\n`);
    }
    return { trusted: "no" };
  }
  const held = unapprovedPiProject(st);
  if (held.length === 0) return { trusted: "undecided" };
  const names = held.map((h) => h.name).join(", ");
  if (host.trust?.decided) {
    if (host.trust.trusted) {
      try {
        ctx.ui.notify(trustedWarning(names, host.trust.from ?? cwd), "warning");
      } catch {
        // no UI: the session notice and doctor say it too
      }
    }
    return { trusted: "undecided" }; // the person's earlier decision stands
  }
  if (!ctx.hasUI) return { trusted: "undecided" }; // without a UI Pi does not trust
  const picked = await ctx.ui.select(trustQuestion(cwd, names), [NO, TRUST_SESSION, TRUST_REMEMBER]);
  if (picked === TRUST_REMEMBER) return { trusted: "yes", remember: true };
  if (picked === TRUST_SESSION) return { trusted: "yes" };
  return { trusted: "no" };
}

/** /piagent-mcp, /piagent-mode and the policy tools. */
function registerCommands(s: Session): void {
  s.pi.registerCommand("piagent-mcp", {
    description: "MCP servers in this project: status, approve, reject, enable, disable, doctor, …",
    getArgumentCompletions: (prefix: string) => {
      if (!s.cache.last) s.cache.refresh(projectOf(s.lastCtx)).catch(() => undefined);
      return completions(prefix, s.cache.last);
    },
    handler: async (args: string, ctx: ExtensionCommandContext) => {
      s.lastCtx = ctx;
      await handleMcpCommand(args, ctx, { guard: s.guard, cache: s.cache, project: projectOf });
    },
  });

  s.pi.registerCommand("piagent-mode", {
    description: "Show or switch the tool-policy mode: readOnly, memory, docsWrite, sourceWrite, ship",
    getArgumentCompletions: (prefix: string) => modeCompletions(prefix),
    handler: async (args: string, ctx: ExtensionCommandContext) => {
      s.lastCtx = ctx;
      await handleModeCommand(args, ctx, { guard: s.guard, project: projectOf });
    },
  });

  for (const tool of policyTools(s.guard, projectOf)) s.pi.registerTool(tool);
}

/** Whether Pi's built-in MCP client's /mcp is loaded in this session. */
function builtinMcpLoaded(s: Session): boolean {
  try {
    return (s.pi.getCommands?.() ?? []).some((c) => c.name === "mcp" && String(c.sourceInfo?.path ?? "").startsWith("builtin:"));
  } catch {
    return false;
  }
}

/**
 * Whether piagent takes /mcp from Pi's built-in MCP client (see takeMcp):
 * the first load's answer, or the helper's.
 */
function stepAside(s: Session): Promise<void> {
  // Pi's built-in MCP client (Pi ≥ 0.99) connects every enabled server of
  // <agentDir>/mcp.json and a trusted project's .pi/mcp.json at session
  // start, asking no one. Pi leaves a built-in out when an extension
  // registers one of its names; its only name at load time is /mcp. The
  // adapter registers /mcp too, so piagent takes the name only when the
  // adapter does not load (the helper reads Pi's packages and command line);
  // when it cannot tell, it takes it.
  const takeMcp = (aside: boolean) => {
    (globalThis as { [STEP_ASIDE]?: boolean })[STEP_ASIDE] = aside;
    if (!aside) return;
    s.pi.registerCommand("mcp", {
      description: "MCP servers are managed by piagent here (Pi's built-in MCP client is kept out): see /piagent-mcp",
      handler: async (_args: string, ctx: ExtensionCommandContext) => {
        tell(ctx, STEPPED_ASIDE, "info");
      },
    });
  };
  // A reload runs this factory again in the same process: the answer of the
  // first load stands, and the factory does not wait on the helper then
  // (waiting there delays the reload and leaves the adapter's start-up with
  // a stale context).
  const known = (globalThis as { [STEP_ASIDE]?: boolean })[STEP_ASIDE];
  return known !== undefined
    ? Promise.resolve(takeMcp(known))
    : s.guard
      .host(process.cwd(), process.argv.slice(2), startTimeoutMs())
      .then((h) => h?.stepAside !== false, () => true)
      .then(takeMcp);
}

/** Pi's bash tool, rebuilt to run under `piagent sandbox exec` (or blocked). */
function sandboxBash(s: Session): Promise<void> {
  // The agent's shell runs under `piagent sandbox exec` (sandbox.ts). Pi's
  // own bash tool is rebuilt with sandboxed operations; it is loaded from
  // Pi itself at run time, so this package keeps no runtime dependency.
  const bin = async (): Promise<SandboxBinary | undefined> => {
    if (!s.guard.client.binary) {
      try {
        await s.guard.client.start(process.cwd());
      } catch {
        return undefined;
      }
    }
    const piagent = s.guard.client.binary;
    return piagent ? { piagent, lean: s.guard.client.sandboxBinary } : undefined;
  };
  return import("@earendil-works/pi-coding-agent").then(
    (mod: { createBashTool?: (cwd: string, o: object) => any }) => {
      if (typeof mod.createBashTool !== "function") {
        // This Pi offers no way to rebuild bash: never run it unconfined.
        s.pi.on("tool_call", async (event) =>
          event.toolName === "bash"
            ? { block: true, reason: "piagent: blocked: this Pi version offers no createBashTool, so bash cannot run under piagent's sandbox; upgrade piagent or Pi" }
            : undefined,
        );
        return;
      }
      const cwd = process.cwd();
      const tool = mod.createBashTool(cwd, { operations: sandboxedOperations(bin, () => cwd) });
      // Sequential: Pi runs one message's tool calls in parallel and asks
      // the guard about every one before it runs any, so a write would be
      // judged by the project as it was before a bash call beside it ran
      // (a link retargeted while the write waits). A message with a bash
      // call runs its calls one at a time, each judged just before it runs.
      s.pi.registerTool({ ...tool, label: "bash (sandboxed by piagent)", executionMode: "sequential" });
    },
    () => undefined, // outside Pi (the unit tests): nothing to replace
  );
}

export default function piagentExtension(pi: ExtensionAPI): Promise<void> {
  const s = new Session(pi);
  pi.on("session_start", (event, ctx) => onSessionStart(s, event, ctx));
  pi.on("session_shutdown", async () => {
    s.guard.stop();
  });
  pi.on("before_provider_request", (event, ctx) => onProviderRequest(s, event, ctx));
  pi.on("tool_call", (event, ctx) => guardedToolCall(s, event, ctx));
  pi.on("tool_result", (event, ctx) => guardedToolResult(s, event, ctx));
  pi.on("tool_execution_end", (event) => s.inFlight.end(event.toolCallId));
  pi.on("turn_end", () => s.inFlight.clear());
  pi.on("agent_end", () => s.inFlight.clear());
  pi.events.on(TOOL_APPROVAL_REQUEST_EVENT, (data: unknown) => onApprovalRequest(s, data));
  pi.on("project_trust", (event, ctx) => onProjectTrust(s, event, ctx));
  registerCommands(s);
  return Promise.all([stepAside(s), sandboxBash(s)]).then(() => undefined);
}

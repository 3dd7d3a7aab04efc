// guard.ts: the typed methods of the piagent-guard protocol, and the one
// place where a helper failure becomes a fail-closed answer. Nothing here
// decides whether a call may run; the helper does. What this file decides is
// only what to do when there is no answer: block the call, withhold the
// result, deny the broker request.

import { type Fix, fixWords, namesFix, type NoticeLine, TERMINAL } from "./fix.ts";
import type { FirstSeen, WithheldTool } from "./withhold.ts";
import { FIND_HINT, type Handshake, HelperClient, HelperError, HelperUnavailable, REQUEST_TIMEOUT_MS } from "./helper.ts";

export type DecideAction = "allow" | "block" | "confirm" | "warn";

/** The answer of `decide`. */
export interface Decision {
  action: DecideAction;
  code: string;
  reason: string;
  server?: string;
  state?: string;
  /** What lets the call through: piagent-mcp steps, as data (fix.ts words them). */
  fix?: Fix;
}

export interface TextPart {
  type: "text";
  text: string;
}
export type ContentPart = TextPart | { type: string; [key: string]: unknown };

/** The answer of `check`: a decision, plus the policy rule that fired and its subject. */
export interface CheckAnswer extends Decision {
  rule?: string;
  subject?: string;
}

/** The answer of `mode`. */
export interface ModeAnswer {
  /** The mode calls run under; "" when no one chose one (the policy's default applies). */
  mode: string;
  modes: string[];
  /** Whether the mode is this session's choice (made with /piagent-mode). */
  session: boolean;
  /** Where the mode comes from: session, project, default or unreadable (piagent ≥ this release). */
  source?: string;
}

/** The answer of `redact`. */
export interface Redaction {
  content: ContentPart[];
  removed: number;
  rules?: string[];
}

/** The answer of `broker`. */
export interface BrokerAnswer {
  action: "allow" | "deny";
  reason: string;
}

/** One tool as pi.getAllTools() lists it, for the helper's `report`. */
export interface ReportedTool {
  name: string;
  description?: string;
  parameters?: unknown;
  annotations?: unknown;
}

/** The helper's answer to `host` (docs/helper-protocol.md). */
export interface HostAnswer {
  adapterLoads: boolean;
  stepAside: boolean;
  why: string;
  /** The project's entry in Pi's trust.json (decided: there is one). */
  trust?: { trusted: boolean; decided: boolean; from?: string; error?: string };
}

export interface ServerState {
  name: string;
  state: string;
  reason?: string;
  fix?: Fix;
  repositoryControlled?: boolean;
  /** The piagent-mcp subcommands that apply to it now (the helper decides). */
  actions?: string[];
  scope?: string;
  source?: string;
}

export interface StateBlock {
  code: string;
  reason: string;
  files?: string[];
  fix?: Fix;
}

/** The answer of `state`. */
export interface GateState {
  project: string;
  fullBlock: boolean;
  blocks: StateBlock[];
  servers: ServerState[];
  /** The session notice: each line's words and its fix (fix.ts noticeWords). */
  notice: NoticeLine[];
  /** Tool names to take out of the model's tool list (their catalogue changed). */
  hiddenTools?: string[];
}

/** Why the helper gave no answer, in words a person can act on. */
export function describeFailure(err: unknown): string {
  if (err instanceof HelperUnavailable) {
    return `the guard helper is not running (${err.message})`;
  }
  if (err instanceof HelperError) {
    return `the guard helper could not answer (${err.message})`;
  }
  return `the guard helper failed (${err instanceof Error ? err.message : String(err)})`;
}

/** What a person does about a failure. */
export function fixFor(err: unknown): string {
  if (err instanceof HelperError) return "run `piagent mcp doctor` in a terminal to see what is wrong";
  if (err instanceof HelperUnavailable && err.fix) return err.fix;
  return FIND_HINT;
}

/** The block reason for a call the helper could not check. */
export function unavailableReason(err: unknown): string {
  if (err instanceof HelperError) {
    return `piagent: ${describeFailure(err)}; this call is blocked. To fix: ${fixFor(err)}.`;
  }
  return `piagent: ${describeFailure(err)}; every tool call is blocked until it answers. ` +
    `To fix: ${fixFor(err)}. The helper is started again on the next tool call.`;
}

/** The text that replaces a result the helper could not check. */
export function withheldText(err: unknown): string {
  return `piagent: this tool's output was withheld because it could not be checked for protected ` +
    `content or secrets: ${describeFailure(err)}. The tool itself did run. To fix: ${fixFor(err)}.`;
}

/**
 * A block reason for the model and the person: the helper's words, then the
 * fix in the terminal's words when they do not name it already (several
 * steps as several lines).
 */
export function blockReason(d: Decision): string {
  let reason = d.reason && d.reason.trim() !== "" ? d.reason : `blocked by piagent (${d.code})`;
  if (!reason.startsWith("piagent")) reason = `piagent: ${reason}`;
  const fix = fixWords(d.fix, TERMINAL);
  if (fix && !namesFix(reason, d.fix)) {
    reason += fix.includes("\n")
      ? `\nTo allow it, a person runs, in a terminal or through /piagent-mcp:\n${fix}`
      : `\nTo allow it, a person runs \`${fix}\` in a terminal or through /piagent-mcp.`;
  }
  return reason;
}

/**
 * Guard is the session's view of the helper: typed calls for one project.
 *
 * It also keeps the session's mode. The helper holds a mode set with
 * /piagent-mode only while it runs; when it dies and a new one starts, the
 * new one would fall back to the project's choice, which may allow more.
 * So the first request to every new helper sets the session's mode again,
 * and a request whose mode cannot be restored fails (and is blocked).
 */
export class Guard {
  readonly client: HelperClient;
  /** The mode chosen for this session, when one was. */
  private sessionMode: string | undefined;
  /** The handshake of the helper that holds sessionMode. */
  private modeHolder: Handshake | undefined;
  constructor(client = new HelperClient()) {
    this.client = client;
  }

  /** Called with the session's mode whenever it changes (undefined: forgotten). */
  onModeChange: ((mode: string | undefined) => void) | undefined;

  /** The mode chosen for this session with /piagent-mode, if any. */
  get chosen(): string | undefined {
    return this.sessionMode;
  }

  /** Takes over a session mode chosen before a reload; the next request sets it on the helper. */
  restoreMode(mode: string): void {
    this.sessionMode = mode;
    this.modeHolder = undefined;
  }

  /** Every request goes through here, so a restarted helper gets the session's mode first. */
  private async request<T>(project: string, method: string, params: unknown, timeoutMs = REQUEST_TIMEOUT_MS): Promise<T> {
    if (this.sessionMode !== undefined) {
      await this.client.start(project);
      const hs = this.client.handshake;
      if (hs === undefined || hs !== this.modeHolder) {
        await this.client.request<ModeAnswer>(project, "mode", { set: this.sessionMode }, timeoutMs);
        this.modeHolder = this.client.handshake;
      }
    }
    return this.client.request<T>(project, method, params, timeoutMs);
  }

  decide(project: string, params: {
    toolName: string;
    input: unknown;
    sourcePath?: string;
  }): Promise<Decision> {
    return this.request<Decision>(project, "decide", params);
  }

  /** The same engine as decide, for the model's policy tools; the helper remembers nothing. */
  check(project: string, params: { toolName: string; input: unknown }): Promise<CheckAnswer> {
    return this.request<CheckAnswer>(project, "check", params);
  }

  /** Shows the mode, or sets it for this session (set). */
  async mode(project: string, set?: string): Promise<ModeAnswer> {
    if (set === undefined) return this.request<ModeAnswer>(project, "mode", {});
    const answer = await this.client.request<ModeAnswer>(project, "mode", { set });
    // Only a mode the helper accepted is remembered for restarts.
    this.sessionMode = set;
    this.modeHolder = this.client.handshake;
    this.onModeChange?.(set);
    return answer;
  }

  /** Forgets the session's mode (a new session): the helper that holds it is stopped. */
  forgetMode(): void {
    if (this.sessionMode === undefined) return;
    this.sessionMode = undefined;
    this.modeHolder = undefined;
    this.onModeChange?.(undefined);
    this.client.stop();
  }

  redact(project: string, params: {
    toolName: string;
    input: unknown;
    content: ContentPart[];
  }): Promise<Redaction> {
    return this.request<Redaction>(project, "redact", params);
  }

  broker(project: string, params: {
    serverName: string;
    originalToolName?: string;
    origin?: string;
  }): Promise<BrokerAnswer> {
    return this.request<BrokerAnswer>(project, "broker", params);
  }

  /** Reports the tools Pi's built-in MCP client registered, for their catalogue pins. */
  report(project: string, tools: ReportedTool[]): Promise<{ servers: number; changed: string[] }> {
    return this.request(project, "report", { tools });
  }

  /** Which of the tools Pi would declare to the model it must not be shown (issue 39). */
  withheld(project: string, tools: { name: string; sourcePath?: string }[]): Promise<{ withheld: WithheldTool[]; firstSight?: FirstSeen[] }> {
    return this.request(project, "withheld", { tools });
  }

  /** Whether this Pi session loads the adapter, or the built-in MCP client must step aside. */
  host(project: string, argv: string[], timeoutMs = REQUEST_TIMEOUT_MS): Promise<HostAnswer> {
    return this.request<HostAnswer>(project, "host", { argv }, timeoutMs);
  }

  state(project: string, timeoutMs = REQUEST_TIMEOUT_MS): Promise<GateState> {
    return this.request<GateState>(project, "state", {}, timeoutMs);
  }

  stop(): void {
    this.client.stop();
  }
}

// guard.ts: the typed methods of the piagent-guard protocol, and the one
// place where a helper failure becomes a fail-closed answer. Nothing here
// decides whether a call may run; the helper does. What this file decides is
// only what to do when there is no answer: block the call, withhold the
// result, deny the broker request.

import { FIND_HINT, HelperClient, HelperError, HelperUnavailable, REQUEST_TIMEOUT_MS } from "./helper.ts";

export type DecideAction = "allow" | "block" | "confirm" | "warn";

/** The answer of `decide`. */
export interface Decision {
  action: DecideAction;
  code: string;
  reason: string;
  server?: string;
  state?: string;
  fix?: string;
  /**
   * false: the helper has nothing to redact in this call's result, so the
   * extension may skip `redact` for it. Absent means "ask".
   */
  redact?: boolean;
}

export interface TextPart {
  type: "text";
  text: string;
}
export type ContentPart = TextPart | { type: string; [key: string]: unknown };

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

export interface ServerState {
  name: string;
  state: string;
  reason?: string;
  fix?: string;
  repositoryControlled?: boolean;
  scope?: string;
  source?: string;
}

export interface StateBlock {
  code: string;
  reason: string;
  files?: string[];
  fix?: string;
}

/** The answer of `state`. */
export interface GateState {
  project: string;
  fullBlock: boolean;
  blocks: StateBlock[];
  servers: ServerState[];
  notice: string[];
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

/** A block reason for the model and the person: the helper's words, then the fix. */
export function blockReason(d: Decision): string {
  let reason = d.reason && d.reason.trim() !== "" ? d.reason : `blocked by piagent (${d.code})`;
  if (!reason.startsWith("piagent")) reason = `piagent: ${reason}`;
  if (d.fix && !reason.includes(d.fix)) {
    reason += `\nTo allow it, a person runs \`${d.fix}\` in a terminal or through /piagent-mcp.`;
  }
  return reason;
}

/** Guard is the session's view of the helper: typed calls for one project. */
export class Guard {
  readonly client: HelperClient;
  constructor(client = new HelperClient()) {
    this.client = client;
  }

  decide(project: string, params: {
    toolName: string;
    input: unknown;
    sourcePath?: string;
    toolCallId?: string;
  }): Promise<Decision> {
    return this.client.request<Decision>(project, "decide", params);
  }

  redact(project: string, params: {
    toolName: string;
    input: unknown;
    content: ContentPart[];
    isError?: boolean;
  }): Promise<Redaction> {
    return this.client.request<Redaction>(project, "redact", params);
  }

  broker(project: string, params: {
    serverName: string;
    originalToolName?: string;
    origin?: string;
  }): Promise<BrokerAnswer> {
    return this.client.request<BrokerAnswer>(project, "broker", params);
  }

  state(project: string, timeoutMs = REQUEST_TIMEOUT_MS): Promise<GateState> {
    return this.client.request<GateState>(project, "state", {}, timeoutMs);
  }

  stop(): void {
    this.client.stop();
  }
}

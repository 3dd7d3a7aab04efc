// helper.ts: the client side of the piagent-guard protocol
// (docs/helper-protocol.md). One long-running `piagent guard serve` per
// session, newline-delimited JSON on its stdin and stdout.
//
// The client never decides anything. It only reports, as a HelperUnavailable
// error, every way the helper can fail to answer: it cannot start, its
// handshake is wrong, it died, it broke framing, or it did not answer within
// the timeout. In each of those cases the process is killed and forgotten, and
// the next request starts a fresh one. The caller turns the error into a block.

import { spawn, type ChildProcess } from "node:child_process";
import { StringDecoder } from "node:string_decoder";

export const PROTOCOL = "piagent-guard";
/**
 * The protocol version this extension speaks (internal/helper's Version;
 * a Go test holds the two together). Version 2: fixes are data.
 */
export const PROTOCOL_VERSION = 2;

/** How long a request may wait for its answer. */
export const REQUEST_TIMEOUT_MS = 2000;
/** How long a start may wait for the handshake line, unless configured. */
export const START_TIMEOUT_MS = 5000;

/**
 * How long a start may wait for the handshake line:
 * PIAGENT_HELPER_START_TIMEOUT_MS when it is a whole number of milliseconds
 * above zero (a loaded machine, a slow disk), else START_TIMEOUT_MS. Any
 * other value is ignored: the default still bounds the wait.
 */
export function startTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const v = (env.PIAGENT_HELPER_START_TIMEOUT_MS ?? "").trim();
  return /^[1-9][0-9]{0,8}$/.test(v) ? Number(v) : START_TIMEOUT_MS;
}

/** The first line the helper writes. */
export interface Handshake {
  protocol: string;
  version: number;
  piagent?: string;
  pid?: number;
  /** The helper's own executable, absolute (piagent ≥ 0.1.0 with the sandbox). */
  bin?: string;
  /** piagent-sandbox beside it, absolute, when installed there and trusted. */
  sandbox?: string;
}

/** The helper could not give an answer; its process (if any) is gone. */
export class HelperUnavailable extends Error {
  /** How to fix it, when it is not "make piagent findable". */
  readonly fix: string | undefined;
  constructor(message: string, fix?: string) {
    super(message);
    this.name = "HelperUnavailable";
    this.fix = fix;
  }
}

/** The helper answered with an in-band error; the process is still fine. */
export class HelperError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(`${code}: ${message}`);
    this.name = "HelperError";
    this.code = code;
  }
}

/** Which executable is piagent: PIAGENT_BIN when set, else `piagent` on PATH. */
export function piagentBinary(env: NodeJS.ProcessEnv = process.env): string {
  const bin = env.PIAGENT_BIN;
  return bin && bin.trim() !== "" ? bin : "piagent";
}

/** How to make piagent findable, for messages. */
export const FIND_HINT = "check that `piagent` is on PATH or set PIAGENT_BIN to its path";

/** What to do about a slow start, for messages. */
export const START_HINT = "on a slow or loaded machine, allow it longer: PIAGENT_HELPER_START_TIMEOUT_MS=15000";

/** How to pair the extension with the binary, for messages. */
export const MATCH_HINT = "install the extension that matches the binary: pi install \"$(piagent extension path)\"";

/** How to pair them when the binary is the older of the two. */
export const UPDATE_HINT = "update piagent to the release this extension came with, or " + MATCH_HINT;

/**
 * Why a handshake is not one this extension can speak to, and the fix:
 * the older side is the one to change. undefined: it is.
 */
export function handshakeMismatch(m: { protocol?: unknown; version?: unknown }): { why: string; fix: string } | undefined {
  if (m.protocol === PROTOCOL && m.version === PROTOCOL_VERSION) return undefined;
  const got = `${JSON.stringify(m.protocol ?? null)} version ${JSON.stringify(m.version ?? null)}`;
  const why = `it speaks protocol ${got}, this extension speaks ${PROTOCOL} version ${PROTOCOL_VERSION}`;
  if (m.protocol === PROTOCOL && typeof m.version === "number" && m.version < PROTOCOL_VERSION) {
    return { why: `${why}: the piagent binary is older than this extension`, fix: UPDATE_HINT };
  }
  if (m.protocol === PROTOCOL && typeof m.version === "number") {
    return { why: `${why}: this extension is older than the piagent binary`, fix: MATCH_HINT };
  }
  return { why, fix: MATCH_HINT };
}

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
  method: string;
}

/** One running helper process. Made by HelperClient; never restarted. */
class Connection {
  readonly child: ChildProcess;
  handshake: Handshake | undefined;
  private buf = "";
  private decoder = new StringDecoder("utf8");
  private stderrTail = "";
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private dead: string | undefined;
  private deadFix: string | undefined;
  private ready: Promise<Handshake>;
  private onDeath: () => void;

  constructor(bin: string, project: string, onDeath: () => void, startTimeoutOverride?: number) {
    this.onDeath = onDeath;
    this.child = spawn(bin, ["guard", "serve", "--project", project], {
      cwd: project,
      stdio: ["pipe", "pipe", "pipe"],
      env: process.env,
      windowsHide: true,
    });
    // The helper must never keep Pi alive; a pending request keeps its own timer.
    this.child.unref();
    for (const s of [this.child.stdin, this.child.stdout, this.child.stderr]) {
      (s as unknown as { unref?: () => void } | null)?.unref?.();
    }

    let handshakeResolve!: (h: Handshake) => void;
    let handshakeReject!: (e: Error) => void;
    this.ready = new Promise<Handshake>((res, rej) => {
      handshakeResolve = res;
      handshakeReject = rej;
    });
    // A start that fails before anyone awaits must not be an unhandled rejection.
    this.ready.catch(() => {});
    const startTimeout = startTimeoutOverride ?? startTimeoutMs();
    const startTimer = setTimeout(() => {
      this.guarded(() => this.fail(`it did not send its handshake within ${startTimeout / 1000}s`, START_HINT));
    }, startTimeout);
    this.pending.set(0, {
      method: "handshake",
      timer: startTimer,
      resolve: (v) => handshakeResolve(v as Handshake),
      reject: handshakeReject,
    });

    // Every handler below runs from Node's event loop: what one throws
    // would end Pi. Each is guarded, so a throw kills this helper instead.
    this.child.on("error", (err: NodeJS.ErrnoException) => this.guarded(() => {
      if (err?.code === "ENOENT") this.fail(`${bin} was not found`);
      else this.fail(`${bin} could not be started: ${err?.message}`);
    }));
    this.child.on("exit", (code, signal) => this.guarded(() => {
      const how = signal ? `was killed by ${signal}` : `exited with status ${code}`;
      const tail = this.stderrTail.trim().split("\n").slice(-3).join(" | ");
      this.fail(tail ? `it ${how}: ${tail}` : `it ${how}`);
    }));
    this.child.stdin?.on("error", () => {}); // EPIPE after death is reported by "exit"
    this.child.stdout?.on("error", () => {});
    this.child.stderr?.on("error", () => {});
    this.child.stderr?.setEncoding("utf8");
    this.child.stderr?.on("data", (s: string) => this.guarded(() => {
      this.stderrTail = (this.stderrTail + s).slice(-2000);
    }));
    // Whatever arrives after the helper was given up (a handshake later
    // than the start timeout, on a loaded machine) is not read.
    this.child.stdout?.on("data", (b: Buffer) => this.guarded(() => {
      if (this.dead === undefined) this.onData(this.decoder.write(b));
    }));
  }

  /** Runs an event handler; a throw fails this helper instead of reaching Node. */
  private guarded(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      try {
        this.fail(`the extension could not read its answer (${err instanceof Error ? err.message : String(err)})`);
      } catch {
        // nothing more can be done; Pi keeps running and the next request starts a new helper
      }
    }
  }

  /** Resolves with the handshake once it was checked. */
  start(): Promise<Handshake> {
    return this.ready;
  }

  get alive(): boolean {
    return this.dead === undefined;
  }

  request<T>(method: string, params: unknown, timeoutMs: number): Promise<T> {
    if (this.dead !== undefined) return Promise.reject(new HelperUnavailable(this.dead, this.deadFix));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.guarded(() => this.fail(`it did not answer ${method} within ${timeoutMs / 1000}s`));
      }, timeoutMs);
      this.pending.set(id, { method, timer, resolve: resolve as (v: unknown) => void, reject });
      const line = JSON.stringify({ id, method, params }) + "\n";
      try {
        this.child.stdin!.write(line);
      } catch (err) {
        this.fail(`writing to it failed: ${(err as Error).message}`);
      }
    });
  }

  /** Ends the process politely: closing stdin makes the helper exit. */
  close(): void {
    if (this.dead === undefined) this.fail("it was stopped");
  }

  /** Kills the process and rejects everything still waiting. Idempotent. */
  fail(why: string, fix?: string): void {
    if (this.dead !== undefined) return;
    this.dead = why;
    this.deadFix = fix;
    for (const [, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new HelperUnavailable(why, fix));
    }
    this.pending.clear();
    try {
      this.child.stdin?.end();
    } catch {
      // already gone
    }
    if (this.child.exitCode === null && this.child.signalCode === null) {
      try {
        this.child.kill("SIGKILL");
      } catch {
        // already gone
      }
    }
    this.onDeath();
  }

  // Lines are split on LF only: U+2028 and U+2029 are ordinary characters
  // inside JSON strings.
  private onData(s: string): void {
    this.buf += s;
    let nl: number;
    while ((nl = this.buf.indexOf("\n")) >= 0) {
      const line = this.buf.slice(0, nl).replace(/\r$/, "");
      this.buf = this.buf.slice(nl + 1);
      if (line.trim() !== "") this.onLine(line);
      if (this.dead !== undefined) return;
    }
    if (this.buf.length > 64 << 20) this.fail("it sent a line longer than 64 MiB");
  }

  private onLine(line: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      this.fail(`it sent a line that is not JSON: ${line.slice(0, 120)}`);
      return;
    }
    if (typeof msg !== "object" || msg === null || Array.isArray(msg)) {
      this.fail(`it sent a line that is not a JSON object: ${line.slice(0, 120)}`);
      return;
    }
    const m = msg as Record<string, unknown>;
    if (this.handshake === undefined) {
      const p = this.pending.get(0);
      if (p === undefined) {
        this.fail("it sent its handshake after the extension stopped waiting for it");
        return;
      }
      this.pending.delete(0);
      clearTimeout(p.timer);
      const mismatch = handshakeMismatch(m);
      if (mismatch) {
        p.reject(new HelperUnavailable(mismatch.why, mismatch.fix));
        this.fail(mismatch.why, mismatch.fix);
        return;
      }
      this.handshake = m as unknown as Handshake;
      p.resolve(this.handshake);
      return;
    }
    if (m.id === null || m.id === undefined) {
      // {"id":null,"error":{"code":"framing"}}: the helper is about to exit.
      const e = m.error as { code?: string; message?: string } | undefined;
      this.fail(`it reported ${e?.code ?? "an error"}: ${e?.message ?? line.slice(0, 120)}`);
      return;
    }
    const id = typeof m.id === "number" ? m.id : Number.NaN;
    const p = this.pending.get(id);
    if (!p) {
      this.fail(`it answered an unknown request id ${JSON.stringify(m.id)}`);
      return;
    }
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (m.error !== undefined && m.error !== null) {
      const e = m.error as { code?: unknown; message?: unknown };
      p.reject(new HelperError(String(e.code ?? "error"), String(e.message ?? "")));
      return;
    }
    p.resolve(m.result);
  }
}

/**
 * HelperClient owns at most one helper at a time for one project. A request
 * starts the helper when there is none (or the last one died), so a crash
 * costs the calls made while it was down, never the rest of the session.
 */
export class HelperClient {
  private conn: Connection | undefined;
  private project: string | undefined;
  private readonly bin: () => string;
  private readonly startTimeoutOverride: number | undefined;
  /**
   * The absolute path the first helper reported. Once known it is the only
   * binary ever started again: a `piagent` planted earlier on PATH after
   * the agent killed the helper does not become the helper.
   */
  private resolved: string | undefined;
  private restartBin: string | undefined;
  private resolvedSandbox: string | undefined;

  constructor(bin: () => string = () => piagentBinary(), startTimeoutOverride?: number) {
    this.bin = bin;
    this.startTimeoutOverride = startTimeoutOverride;
  }

  /** The helper's absolute path once a helper has answered. */
  get binary(): string | undefined {
    return this.resolved;
  }

  /** piagent-sandbox's absolute path, as the first helper reported it. */
  get sandboxBinary(): string | undefined {
    return this.resolvedSandbox;
  }

  /** The handshake of the running helper, if one is running. */
  get handshake(): Handshake | undefined {
    return this.conn?.alive ? this.conn.handshake : undefined;
  }

  /** Starts the helper for project now (it is started lazily otherwise). */
  async start(project: string): Promise<Handshake> {
    return this.connection(project).start();
  }

  async request<T>(project: string, method: string, params: unknown, timeoutMs = REQUEST_TIMEOUT_MS): Promise<T> {
    const conn = this.connection(project);
    await conn.start();
    return conn.request<T>(method, params, timeoutMs);
  }

  /** Stops the helper, if any. The next request starts a new one. */
  stop(): void {
    const c = this.conn;
    this.conn = undefined;
    c?.close();
  }

  private connection(project: string): Connection {
    if (this.conn && this.conn.alive && this.project === project) return this.conn;
    this.stop();
    this.project = project;
    // An absolute PIAGENT_BIN (the launcher sets it) is kept as given; a
    // bare name found on PATH once is replaced by the absolute path the
    // helper reports, so PATH is never consulted again.
    const configured = this.bin();
    const start = configured.startsWith("/") ? configured : (this.restartBin ?? configured);
    const conn: Connection = new Connection(start, project, () => {
      if (this.conn === conn) this.conn = undefined;
    }, this.startTimeoutOverride);
    this.conn = conn;
    conn.start().then(
      (h) => {
        if (this.resolved === undefined && typeof h?.bin === "string" && h.bin.startsWith("/")) {
          this.resolved = h.bin;
          this.restartBin = h.bin;
          if (typeof h.sandbox === "string" && h.sandbox.startsWith("/")) this.resolvedSandbox = h.sandbox;
        }
      },
      () => {},
    );
    return conn;
  }
}

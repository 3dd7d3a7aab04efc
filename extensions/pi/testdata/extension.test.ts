// extension.test.ts: unit tests for the extension, run with Node 22's test
// runner and type stripping (test/e2e runs them as TestExtensionUnit):
//
//   node --test extensions/pi/testdata/extension.test.ts
//
// The helper is stub-helper.mjs; Pi is a fake ExtensionAPI that records the
// handlers the extension registers.

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { completions, splitArgs } from "../command.ts";
import { blockReason, type GateState } from "../guard.ts";
import { HelperClient, HelperError, HelperUnavailable } from "../helper.ts";
import piagentExtension from "../index.ts";

const here = dirname(fileURLToPath(import.meta.url));
const stub = join(here, "stub-helper.mjs");
const project = here;

/** Runs fn with STUB_* variables set, restoring them after. */
async function withEnv<T>(vars: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const old: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(vars)) {
    old[k] = process.env[k];
    process.env[k] = v;
  }
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(old)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

test("splitArgs", () => {
  const cases: [string, string[]][] = [
    ["", []],
    ["   ", []],
    ["approve internal", ["approve", "internal"]],
    ["  get   a.b  ", ["get", "a.b"]],
    [`add x --env "A=\${TOKEN}" --arg 'two words'`, ["add", "x", "--env", "A=${TOKEN}", "--arg", "two words"]],
    [`a\\ b "q\\"x" ''`, ["a b", 'q"x', ""]],
  ];
  for (const [input, want] of cases) assert.deepEqual(splitArgs(input), want, input);
});

const state: GateState = {
  project: "/p",
  fullBlock: false,
  blocks: [],
  notice: [],
  servers: [
    { name: "internal", state: "pending-approval", repositoryControlled: true },
    { name: "intern2", state: "ready", repositoryControlled: true },
    { name: "mine", state: "disabled", repositoryControlled: false },
  ],
};

test("completions: subcommands, then the servers each one fits", () => {
  assert.deepEqual(completions("ap", state)?.map((i) => i.value), ["approve "]);
  assert.deepEqual(completions("d", state)?.map((i) => i.value), ["doctor", "disable "]);
  assert.deepEqual(completions("approve ", state)?.map((i) => i.value), ["approve internal"]);
  assert.deepEqual(completions("approve int", state)?.map((i) => i.value), ["approve internal"]);
  assert.deepEqual(completions("reject int", state)?.map((i) => i.value), ["reject internal", "reject intern2"]);
  assert.deepEqual(completions("enable ", state)?.map((i) => i.value), ["enable mine"]);
  assert.deepEqual(completions("get ", state)?.map((i) => i.value), ["get internal", "get intern2", "get mine"]);
  assert.equal(completions("approve ", undefined), null, "no state yet: no names");
  assert.equal(completions("doctor x", state), null, "doctor takes no server");
  assert.equal(completions("nope", state), null);
  assert.equal(completions("approve internal x", state), null, "third word");
});

test("blockReason", () => {
  assert.equal(blockReason({ action: "block", code: "c", reason: "piagent: no" }), "piagent: no");
  assert.equal(blockReason({ action: "block", code: "c", reason: "no" }), "piagent: no");
  assert.equal(blockReason({ action: "block", code: "c", reason: "" }), "piagent: blocked by piagent (c)");
  assert.match(blockReason({ action: "block", code: "c", reason: "no", fix: "piagent-mcp approve x" }),
    /runs `piagent-mcp approve x` in a terminal or through \/piagent-mcp/);
  assert.equal(blockReason({ action: "block", code: "c", reason: "piagent: run piagent-mcp approve x", fix: "piagent-mcp approve x" }),
    "piagent: run piagent-mcp approve x");
});

test("client: round trip, in-band error keeps the process", async () => {
  await withEnv({ STUB_ERROR: "broker" }, async () => {
    const c = new HelperClient(() => stub);
    const d = await c.request<{ action: string }>(project, "decide", { toolName: "mcp", input: { server: "x" } });
    assert.equal(d.action, "block");
    const pid = c.handshake?.pid;
    await assert.rejects(c.request(project, "broker", { serverName: "x" }), HelperError);
    assert.equal(c.handshake?.pid, pid, "an in-band error does not restart the helper");
    c.stop();
  });
});

test("client: a wrong handshake is unavailable, with the install hint", async () => {
  await withEnv({ STUB_HANDSHAKE: "bad" }, async () => {
    const c = new HelperClient(() => stub);
    await assert.rejects(c.request(project, "ping", {}), (err: unknown) => {
      assert.ok(err instanceof HelperUnavailable);
      assert.match(err.message, /version 99/);
      assert.match(err.fix ?? "", /piagent extension path/);
      return true;
    });
    c.stop();
  });
});

test("client: a hung helper times out, is killed, and the next request restarts it", async () => {
  const c = new HelperClient(() => stub);
  await withEnv({ STUB_HANG: "decide" }, async () => {
    const start = Date.now();
    await assert.rejects(c.request(project, "decide", { toolName: "read", input: {} }, 300), /did not answer decide within 0.3s/);
    assert.ok(Date.now() - start < 2000);
  });
  const r = await c.request<{ ok: boolean }>(project, "ping", {});
  assert.equal(r.ok, true);
  c.stop();
});

test("client: a dead helper is unavailable, then restarted", async () => {
  const c = new HelperClient(() => stub);
  await withEnv({ STUB_EXIT_AFTER: "1" }, async () => {
    await c.request(project, "ping", {});
    const first = c.handshake?.pid;
    await assert.rejects(c.request(project, "ping", {}), /exited with status 3/);
    await c.request(project, "ping", {});
    assert.notEqual(c.handshake?.pid, first);
  });
  c.stop();
});

test("client: a missing binary is unavailable", async () => {
  const c = new HelperClient(() => join(here, "no-such-piagent"));
  await assert.rejects(c.request(project, "ping", {}), /was not found/);
});

// A fake Pi: records handlers, the command, the broker listener and UI calls.
type Handler = (event: any, ctx: any) => Promise<any>;
function fakePi() {
  const handlers = new Map<string, Handler>();
  const bus = new Map<string, (data: unknown) => void>();
  const pi = {
    on: (name: string, h: Handler) => void handlers.set(name, h),
    registerCommand: () => {},
    getAllTools: () => [{ name: "mcp", sourceInfo: { path: "/adapter/index.ts" } }],
    events: { on: (ch: string, h: (d: unknown) => void) => void bus.set(ch, h), emit: () => {} },
  };
  piagentExtension(pi as any);
  return { handlers, bus };
}

function fakeCtx(hasUI: boolean, answers: { confirm?: boolean } = {}) {
  const notes: string[] = [];
  const asked: string[] = [];
  return {
    notes,
    asked,
    ctx: {
      hasUI,
      cwd: project,
      mode: hasUI ? "rpc" : "print",
      ui: {
        notify: (m: string) => void notes.push(m),
        confirm: async (title: string) => (asked.push(title), answers.confirm ?? false),
      },
    },
  };
}

test("extension: tool_call actions", async () => {
  await withEnv({ PIAGENT_BIN: stub }, async () => {
    const { handlers } = fakePi();
    const call = handlers.get("tool_call")!;
    const ev = (toolName: string, input: object = {}) => ({ type: "tool_call", toolName, toolCallId: toolName, input });

    const blocked = await call(ev("mcp", { server: "repo-tools", tool: "echo" }), fakeCtx(false).ctx);
    assert.equal(blocked.block, true);
    assert.match(blocked.reason, /pending-approval/);

    assert.equal(await call(ev("read"), fakeCtx(false).ctx), undefined, "allow");

    const noUI = await call(ev("ship"), fakeCtx(false).ctx);
    assert.equal(noUI.block, true, "confirm without a UI blocks");
    assert.match(noUI.reason, /no UI/);

    const yes = fakeCtx(true, { confirm: true });
    assert.equal(await call(ev("ship"), yes.ctx), undefined, "confirmed by the person");
    assert.equal(yes.asked.length, 1);
    const no = fakeCtx(true, { confirm: false });
    assert.match((await call(ev("ship"), no.ctx)).reason, /declined/);

    const w = fakeCtx(true);
    assert.equal(await call(ev("unregistered"), w.ctx), undefined, "warn runs");
    assert.equal(await call(ev("unregistered"), w.ctx), undefined);
    assert.equal(w.notes.filter((n) => n.includes("not in the registry")).length, 1, "warned once");

    const weird = await call(ev("weird"), fakeCtx(false).ctx);
    assert.equal(weird.block, true, "an unknown action blocks");

    await handlers.get("session_shutdown")!({}, fakeCtx(false).ctx);
  });
});

test("extension: tool_result redacts, skips, and withholds when the helper fails", async () => {
  await withEnv({ PIAGENT_BIN: stub }, async () => {
    const { handlers } = fakePi();
    const result = handlers.get("tool_result")!;
    const ev = (toolName: string, text: string) => ({
      type: "tool_result", toolName, toolCallId: `${toolName}-1`, input: {},
      content: [{ type: "text", text }], details: { error: "tool_error", mcpResult: text }, isError: false,
    });
    const ctx = fakeCtx(false).ctx;

    const r = await result(ev("bash", "x SECRET123 y"), ctx);
    assert.deepEqual(r.content, [{ type: "text", text: "x [redacted] y" }]);
    assert.deepEqual(r.details, { piagent: { redacted: 1 }, error: "tool_error" }, "raw details are dropped, the error code kept");
    assert.equal(await result(ev("bash", "clean"), ctx), undefined, "nothing removed: unchanged");
    assert.equal(await result({ ...ev("bash", ""), content: [{ type: "image", data: "", mimeType: "image/png" }] }, ctx),
      undefined, "no text: not asked");

    // decide said redact:false for ls: its result is not sent.
    await handlers.get("tool_call")!({ type: "tool_call", toolName: "ls", toolCallId: "ls-1", input: {} }, ctx);
    assert.equal(await result(ev("ls", "SECRET123"), ctx), undefined);
    await handlers.get("session_shutdown")!({}, ctx);
  });
  await withEnv({ PIAGENT_BIN: join(here, "no-such-piagent") }, async () => {
    const { handlers } = fakePi();
    const r = await handlers.get("tool_result")!({
      type: "tool_result", toolName: "read", toolCallId: "r", input: {},
      content: [{ type: "text", text: "SECRET123" }], details: {}, isError: false,
    }, fakeCtx(false).ctx);
    assert.equal(r.content.length, 1);
    assert.match(r.content[0].text, /withheld/);
    assert.doesNotMatch(r.content[0].text, /SECRET123/);
    assert.equal(r.isError, true);
  });
});

test("extension: the broker claims synchronously and denies unless the helper allows", async () => {
  const ask = async (env: Record<string, string>, serverName: string) => withEnv(env, async () => {
    const { bus, handlers } = fakePi();
    const listener = bus.get("pi-mcp-adapter:tool-approval-request")!;
    let handler: (() => Promise<string>) | undefined;
    let accepting = true;
    listener({
      serverName, originalToolName: "echo", origin: "script",
      claim: (h: () => Promise<string>) => (accepting && !handler ? ((handler = h), true) : false),
    });
    accepting = false;
    assert.ok(handler, "claimed during emit");
    const decision = await handler!();
    await handlers.get("session_shutdown")!({}, fakeCtx(false).ctx);
    return decision;
  });
  assert.equal(await ask({ PIAGENT_BIN: stub, STUB_APPROVED: "ok" }, "ok"), "allow_once");
  assert.equal(await ask({ PIAGENT_BIN: stub, STUB_APPROVED: "ok" }, "other"), "deny");
  assert.equal(await ask({ PIAGENT_BIN: join(here, "no-such-piagent") }, "ok"), "deny");
  assert.equal(await ask({ PIAGENT_BIN: stub, STUB_ERROR: "broker", STUB_APPROVED: "ok" }, "ok"), "deny");
});

// withhold.ts: what the model is sent, with the tools no person accepted
// taken out (issue 39, item 1). The helper decides which tools are
// withheld (`withheld`, docs/helper-protocol.md); this file only applies
// the answer to the request Pi is about to send, in every provider's shape,
// and checks the result: a withheld tool's description still anywhere in
// the request blocks it.
//
// Pi hands `before_provider_request` the provider's own payload. Tool
// declarations differ by API (OpenAI chat: {type, function:{name,
// description, parameters}}; Responses: {type, name, description,
// parameters}; Anthropic: {name, description, input_schema}; Google:
// functionDeclarations [{name, description, parameters…}]; Bedrock:
// {toolSpec:{name, description, inputSchema}}), so a declaration is found
// by what it is, not where: an object (or its function/toolSpec) with a
// name and a description or schema. A tool call in the history has a name
// but neither, and is left alone.
//
// Pi's system prompt lists each declared tool on a line of its own, with a
// snippet of its description: that line goes too.
//
// Pi 1.6's codemode tool inlines the tools scripts may call in its own
// description, one section each ("### `id` (`name`)", the description,
// the declaration); a withheld tool's section is cut out. When a withheld
// tool's own text could pass for a section boundary, the whole listing is
// cut instead.

import type { Fix } from "./fix.ts";

/** One withheld tool: the name the model would see, and what Pi would tell it. */
export interface WithheldTool {
  name: string;
  server?: string;
  code?: string;
  reason?: string;
  fix?: Fix;
}

/** A catalogue pinned at first sight: each tool as "name: description", made visible. */
export interface FirstSeen {
  server: string;
  tools: string[];
}

/** What to take out of a request: the names, and texts that must not remain. */
export interface Withholding {
  names: Set<string>;
  /** Descriptions (trimmed) of the withheld tools, as Pi holds them. */
  texts: string[];
  /** Whether a withheld tool's text could fake a codemode section boundary. */
  boundaryInText: boolean;
}

/** The shortest description the final check looks for: shorter ones occur by chance. */
export const MIN_CHECKED_TEXT = 12;

/** The codemode tool's name in Pi 1.6, and the line that opens its listing of nested tools. */
const CODEMODE = "codemode";
const NESTED = "\n\nNested tools:";

/**
 * Pi 1.6's codemode discovery globals (extensions/codemode/tool.js,
 * DISCOVERY_GLOBALS): a script that names one can read any tool's
 * description, withheld or not.
 */
export const DISCOVERY_GLOBALS = /\b(searchTools|describeNamespace|describeTool|ALL_TOOLS)\b/;

/** Every string in v, keys included. */
function strings(v: unknown, out: string[]): void {
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) for (const e of v) strings(e, out);
  else if (v && typeof v === "object") {
    for (const [k, e] of Object.entries(v)) {
      out.push(k);
      strings(e, out);
    }
  }
}

/**
 * The withholding for the helper's answer, with the descriptions and
 * schemas Pi holds for those names (pi.getAllTools()).
 */
export function withholding(withheld: WithheldTool[], tools: { name: string; description?: unknown; parameters?: unknown }[]): Withholding {
  const names = new Set(withheld.map((w) => w.name));
  const texts: string[] = [];
  let boundaryInText = false;
  for (const t of tools) {
    if (!names.has(t.name)) continue;
    const own: string[] = [];
    strings(t.description, own);
    strings(t.parameters, own);
    if (own.some((s) => s.includes("###") || s.includes("```") || s.includes("\n## ") || s.includes("Nested tools"))) boundaryInText = true;
    const d = typeof t.description === "string" ? t.description.trim() : "";
    if (d.length >= MIN_CHECKED_TEXT) texts.push(d);
  }
  return { names, texts, boundaryInText };
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The part of o that declares a tool (o itself, o.function or o.toolSpec), if any. */
function declaration(o: Obj): Obj | undefined {
  for (const h of [o, o.function, o.toolSpec]) {
    if (!isObj(h) || typeof h.name !== "string") continue;
    if ("description" in h || "parameters" in h || "input_schema" in h || "inputSchema" in h || "parametersJsonSchema" in h) return h;
  }
  return undefined;
}

/**
 * codemode's description with the sections of withheld tools cut out, and
 * how many were cut. Sections are separated by a blank line and open with
 * "### `id`" or "### `id` (`name`)"; namespace headings ("## name") stay.
 */
export function stripCodemode(description: string, w: Withholding): { text: string; removed: number } {
  const at = description.indexOf(NESTED);
  if (at < 0) return { text: description, removed: 0 };
  const head = description.slice(0, at);
  const nested = description.slice(at);
  const named = (chunk: string): string | undefined => {
    const m = /^### `([^`]*)`(?: \(`([^`]*)`\))?\n/.exec(chunk);
    return m ? (m[2] ?? m[1]) : undefined;
  };
  const chunks = nested.split(/\n\n(?=### `|## )/);
  const hit = chunks.some((c) => {
    const n = named(c);
    return n !== undefined && w.names.has(n);
  }) || w.texts.some((t) => nested.includes(t));
  if (!hit) return { text: description, removed: 0 };
  if (w.boundaryInText) {
    return {
      text: `${head}\n\nNested tools: not listed in this session (piagent withholds tools no person has accepted, and one of them could not be told apart from the listing).`,
      removed: chunks.length - 1,
    };
  }
  const kept = chunks.filter((c) => {
    const n = named(c);
    return n === undefined || !w.names.has(n);
  });
  return { text: head + kept.join("\n\n"), removed: chunks.length - kept.length };
}

/**
 * text without the system prompt's line for each withheld tool: Pi lists
 * every declared tool as "- NAME: SNIPPET", the snippet made one line
 * (agent-session.js, _normalizePromptSnippet), and the adapter's snippet
 * is the description's first hundred characters.
 */
export function stripSnippets(text: string, w: Withholding): { text: string; removed: number } {
  if (!text.includes("- ") || w.names.size === 0) return { text, removed: 0 };
  let removed = 0;
  const kept = text.split("\n").filter((line) => {
    const colon = line.indexOf(": ");
    const drop = line.startsWith("- ") && colon > 2 && w.names.has(line.slice(2, colon));
    if (drop) removed++;
    return !drop;
  });
  return removed === 0 ? { text, removed } : { text: kept.join("\n"), removed };
}

/**
 * payload without the withheld tools' declarations (and codemode sections).
 * leak names a withheld description still in the result: the request must
 * not be sent (an API shape this file does not know, or text outside a
 * declaration).
 */
export function withholdFromPayload(payload: unknown, w: Withholding): { payload: unknown; removed: number; leak?: string } {
  let removed = 0;
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      for (const e of v) {
        if (isObj(e)) {
          const d = declaration(e);
          if (d && w.names.has(d.name as string)) {
            removed++;
            continue;
          }
        }
        out.push(walk(e));
      }
      return out;
    }
    if (typeof v === "string") {
      const s = stripSnippets(v, w);
      removed += s.removed;
      return s.text;
    }
    if (!isObj(v)) return v;
    const out: Obj = {};
    for (const [k, e] of Object.entries(v)) out[k] = walk(e);
    const d = declaration(out);
    if (d && d.name === CODEMODE && typeof d.description === "string") {
      const s = stripCodemode(d.description, w);
      if (s.removed > 0) {
        removed += s.removed;
        d.description = s.text;
      }
    }
    return out;
  };
  const next = walk(payload);
  const text = JSON.stringify(next) ?? "";
  for (const t of w.texts) {
    if (text.includes(JSON.stringify(t).slice(1, -1))) return { payload: next, removed, leak: t };
  }
  return { payload: next, removed };
}

/**
 * A payload that cannot be sent: every provider reads its payload's fields
 * (or spreads or serialises it) before anything leaves the process, and
 * each of those throws here with reason. Pi catches a handler's own throw
 * and sends the payload it had, so returning this is how a handler stops a
 * request: the provider's call fails with reason, before any byte is sent.
 */
export function unsendable(reason: string): object {
  const fail = (): never => {
    throw new Error(reason);
  };
  return new Proxy({}, {
    // Promise resolution asks every returned value for "then": answered,
    // or the handler's own promise would reject and Pi send the original.
    get: (_t, p) => (p === "then" ? undefined : fail()),
    has: fail,
    ownKeys: fail,
    getOwnPropertyDescriptor: fail,
    getPrototypeOf: fail,
    set: fail,
    defineProperty: fail,
    deleteProperty: fail,
  });
}

// fix.ts: a fix as the helper sends it, and its words. The helper never
// words a fix for Pi: it sends the data (docs/helper-protocol.md, version 2)
// and the extension says it in its own words, each piagent-mcp step that
// the /piagent-mcp command offers as that command, the others as the
// terminal command, and a fix of several steps as several lines.

/** One piagent-mcp subcommand with its arguments (space-separated). */
export interface Step {
  sub: string;
  args?: string;
}

/** What moves a server or a call on: text, then steps in order, then a note. */
export interface Fix {
  text?: string;
  steps?: Step[];
  note?: string;
}

/** A line of the session notice: its words, and its fix when it has one. */
export interface NoticeLine {
  text: string;
  fix?: Fix;
}

/** Whether a subcommand is one /piagent-mcp offers in Pi. */
export type InPi = (sub: string) => boolean;

/** Every step in the terminal's words: a fix shown outside Pi. */
export const TERMINAL: InPi = () => false;

/** One step: `/piagent-mcp get repo` in Pi, `piagent-mcp grant …` otherwise. */
export function stepWords(s: Step, inPi: InPi): string {
  const cmd = `${inPi(s.sub) ? "/" : ""}piagent-mcp ${s.sub}`;
  return s.args ? `${cmd} ${s.args}` : cmd;
}

/**
 * The fix in words: a single step on the line, several as numbered lines
 * (never two commands as one). "" for an empty fix.
 */
export function fixWords(f: Fix | undefined, inPi: InPi): string {
  if (!f) return "";
  const steps = (f.steps ?? []).map((s) => stepWords(s, inPi));
  let out = f.text ?? "";
  if (steps.length === 1) out = out ? `${out} ${steps[0]}` : steps[0]!;
  else if (steps.length > 1) out += (out ? "\n" : "") + steps.map((s, i) => `  ${i + 1}. ${s}`).join("\n");
  if (f.note) out += (steps.length > 1 ? "\n" : out ? " " : "") + f.note;
  return out;
}

/** Whether text already names every step of the fix (in the terminal's words). */
export function namesFix(text: string, f: Fix | undefined): boolean {
  const steps = f?.steps ?? [];
  return steps.length > 0 && steps.every((s) => text.includes(stepWords(s, TERMINAL)));
}

/** The session notice in words, one line each, fixes after "fix:". */
export function noticeWords(lines: NoticeLine[], inPi: InPi): string {
  return lines.map((l) => {
    const fix = fixWords(l.fix, inPi);
    if (!fix) return l.text;
    return fix.includes("\n") ? `${l.text}; fix:\n${fix}` : `${l.text}; fix: ${fix}`;
  }).join("\n");
}

// transcript.mjs: reads a helper transcript (internal/helper/testdata/transcripts/*.txtar),
// for the stub helper and the extension's tests alike. The Go test
// TestTranscripts replays the same files against the real helper.

import { readFileSync } from "node:fs";

/**
 * The request/answer pairs of the archive's "exchange" file, with $PROJECT and
 * $HOME replaced by the given folders.
 */
export function exchange(file, project, home) {
  const lines = readFileSync(file, "utf8").split("\n");
  const start = lines.indexOf("-- exchange --");
  if (start < 0) throw new Error(`${file}: no exchange`);
  const text = (s) => JSON.stringify(s).slice(1, -1);
  const fill = (s) => s.replaceAll("$PROJECT", text(project)).replaceAll("$HOME", text(home));
  const pairs = [];
  for (let i = start + 1; i < lines.length && !/^-- .* --$/.test(lines[i]); i++) {
    if (!lines[i].startsWith("> ")) continue;
    if (!lines[i + 1]?.startsWith("< ")) throw new Error(`${file}: request without an answer: ${lines[i]}`);
    pairs.push({ request: JSON.parse(fill(lines[i].slice(2))), answer: JSON.parse(fill(lines[++i].slice(2))) });
  }
  return pairs;
}

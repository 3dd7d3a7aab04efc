// Regenerates adapter_golden.json from the published pi-mcp-adapter 2.36.0.
// Usage: node gen_golden.mjs TYPES_MODULE RESOURCE_TOOLS_MODULE > adapter_golden.json
// (dist/types.js with its ui-stream-types re-export removed, and
// dist/resource-tools.js, copied as .mjs files).
const T = await import(process.argv[2]);
const R = await import(process.argv[3]);

const servers = [
  "repo-tools", "a.b c", "foo", "foo-mcp", "foo_mcp", "mymcp", "mcp", "MCP", "x-MCP", "-mcp",
  "github", "my-srv", "srv.v2", "", "_mcpns_x", "ünïcode", "emoji😀", "tab\tname",
  "a".repeat(59), "a".repeat(60), "b-".repeat(40), "long name with spaces and dots.and.more.stuff",
  "foo--mcp", "Mcp", "mcpmcp", "a/b", "__", "-", "é-mcp",
];
const tools = ["echo", "github_search", "a.b", "my-tool", "foo_x", "mcp__foo_x", "", "x.y-z", "repo-tools_echo", "read"];
const candidateTools = ["echo", "my-tool", "x.y-z", "foo_x", ""];
const modes = ["server", "short", "mcp", "none", "bogus"];
const resources = ["", "README.md", "1st file", "__x__", "Ünï", "a--b..c", "ABC", "9", "file:///tmp/x.txt", "😀x"];

const out = { prefix: [], tool: [], namespace: [], resource: [], candidates: [] };
for (const s of servers) {
  out.namespace.push([s, T.formatServerNamespace(s)]);
  for (const m of modes) {
    out.prefix.push([s, m, T.getServerPrefix(s, m)]);
    for (const t of tools) {
      out.tool.push([s, m, t, T.formatToolName(t, s, m)]);
      if (m !== "bogus" && candidateTools.includes(t)) {
        out.candidates.push([s, m, t, ...T.getToolNameCandidates(t, s, m)]);
      }
    }
  }
}
for (const r of resources) out.resource.push([r, `read_${R.resourceNameToToolName(r)}`]);
// One record per line keeps diffs readable.
const lines = [];
for (const [key, rows] of Object.entries(out)) {
  lines.push(`${JSON.stringify(key)}:[\n${rows.map((r) => JSON.stringify(r)).join(",\n")}\n]`);
}
process.stdout.write(`{\n${lines.join(",\n")}\n}\n`);

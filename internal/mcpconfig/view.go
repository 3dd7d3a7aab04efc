package mcpconfig

// FatalReason starts the Reason of a Skipped entry whose problem makes the
// adapter's own config loading throw (a broken Pi settings.json or package
// manifest, an imports entry such as "constructor", an invalid settings
// block in a Claude plugin's .mcp.json). The adapter then loads no MCP
// configuration at all; the rest of the View still shows what is configured.
const FatalReason = "the adapter fails to load any mcp config: "

// batch.ts: a command and Pi's file tools never run at the same time.
//
// Pi runs the tool calls of one assistant message in parallel, after asking
// every call's tool_call hook. So the guard judges a file tool's path as the
// project is before a bash call of the same message runs, and that call can
// then turn the path into a link to anywhere (a FIFO, or a slow write to the
// same file, holds the file tool back until it has): Pi's unconfined write
// would follow it to Pi's settings, or its read to a key. The later of the
// two calls is blocked instead, and the model makes it again in a message
// of its own.

/** Pi's own tools that open the path they are given, in Pi's process. */
export const FILE_TOOLS: ReadonlySet<string> = new Set(["read", "write", "edit", "grep", "find", "ls"]);

type Kind = "command" | "file";

function kindOf(toolName: string): Kind | undefined {
  if (toolName === "bash") return "command";
  return FILE_TOOLS.has(toolName) ? "file" : undefined;
}

/** The calls allowed and not yet ended: from tool_call to tool_execution_end. */
export class InFlight {
  private readonly calls = new Map<string, string>();

  /** Why toolName may not run now (a call of the other kind is in flight), or undefined. */
  clash(toolName: string): string | undefined {
    const kind = kindOf(toolName);
    if (kind === undefined) return undefined;
    for (const other of this.calls.values()) {
      if (kindOf(other) !== kind) {
        return `piagent: blocked: this ${toolName} call came beside a ${other} call that has not ended, and Pi runs them at the same time: ` +
          `a command could change where a file tool's path leads after piagent judged it. Make the ${toolName} call again, in a message of its own.`;
      }
    }
    return undefined;
  }

  /** Records an allowed call. */
  admit(toolCallId: string, toolName: string): void {
    if (kindOf(toolName) !== undefined) this.calls.set(toolCallId, toolName);
  }

  /** A call ended (Pi's tool_execution_end). */
  end(toolCallId: string): void {
    this.calls.delete(toolCallId);
  }

  /** The turn ended: nothing of it is still running. */
  clear(): void {
    this.calls.clear();
  }
}

// The agent's shell, confined: Pi's bash tool is replaced by one whose
// process is `piagent sandbox exec --auto --project CWD -- /bin/bash -c
// COMMAND` (or `piagent-sandbox exec …`, the same in a smaller binary, when
// the helper found it installed beside piagent). The sandbox wraps the shell
// itself, so everything the command starts inherits it. The binaries are the
// absolute paths the helper reported in its handshake, never a fresh PATH
// lookup; a repository's shellPath is
// never used. The `!` commands a person types are theirs and stay
// unconfined (Pi runs them through user_bash, which this file leaves alone).

import { spawn } from "node:child_process";
import { constants } from "node:os";
import type { BashOperations } from "@earendil-works/pi-coding-agent";

/** Where sandbox exec is: piagent, or piagent-sandbox (the same in a smaller binary). */
export interface SandboxBinary {
  piagent: string;
  lean?: string;
}

/** The program and arguments that run command confined in project. */
export function sandboxArgv(b: SandboxBinary, project: string, command: string): [string, string[]] {
  const rest = ["exec", "--auto", "--project", project, "--", "/bin/bash", "-c", command];
  return b.lean ? [b.lean, rest] : [b.piagent, ["sandbox", ...rest]];
}

/**
 * Bash operations that run every command under `piagent sandbox exec`.
 * bin resolves piagent's absolute path (the helper's handshake); when it
 * cannot, the command is refused, never run unconfined.
 */
export function sandboxedOperations(bin: () => Promise<SandboxBinary | undefined>, project: () => string): BashOperations {
  return {
    async exec(command, cwd, { onData, signal, timeout, env }) {
      const piagent = await bin();
      if (!piagent) {
        throw new Error(
          "piagent: blocked: the command cannot be confined because piagent's own path is unknown (the guard helper did not report it); run 'piagent doctor' in a terminal",
        );
      }
      return new Promise((resolve, reject) => {
        const [program, args] = sandboxArgv(piagent, project(), command);
        const child = spawn(program, args, {
          cwd,
          detached: true,
          env: env ?? process.env,
          stdio: ["ignore", "pipe", "pipe"],
        });
        let timedOut = false;
        const killGroup = () => {
          if (!child.pid) return;
          try {
            process.kill(-child.pid, "SIGKILL");
          } catch {
            child.kill("SIGKILL");
          }
        };
        const timer = timeout !== undefined && timeout > 0 ? setTimeout(() => ((timedOut = true), killGroup()), timeout * 1000) : undefined;
        child.stdout?.on("data", onData);
        child.stderr?.on("data", onData);
        child.on("error", (err) => {
          if (timer) clearTimeout(timer);
          reject(err);
        });
        signal?.addEventListener("abort", killGroup, { once: true });
        child.on("close", (code, sig) => {
          if (timer) clearTimeout(timer);
          signal?.removeEventListener("abort", killGroup);
          if (signal?.aborted) reject(new Error("aborted"));
          else if (timedOut) reject(new Error(`timeout:${timeout}`));
          else resolve({ exitCode: code ?? (sig ? 128 + signalNumber(sig) : null) });
        });
      });
    },
  };
}

function signalNumber(sig: NodeJS.Signals): number {
  const n = (constants.signals as Record<string, number>)[sig];
  return typeof n === "number" ? n : 0;
}

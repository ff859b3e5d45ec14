import { spawn } from "node:child_process";
import { GROUP_GUARD, type GuardReport } from "./group-guard.ts";
import { STOP_GRACE_MS, type StopSignals, signalExitCode } from "./stop-signals.ts";

/**
 * Runs COMMAND (given after `--`) with standard I/O passed through and the extra environment, until it ends;
 * resolves to its exit code, 128 + the signal's number when a signal ended it, or 127 (126) as shells do when
 * it cannot be found (run). COMMAND runs in a process group of its own (common/group-guard.ts), so every
 * stop signal the wrapper receives, duplicates included, goes on to COMMAND and all its children, as
 * init-style wrappers do: COMMAND decides how to stop. If it is still running STOP_GRACE_MS after the first
 * one, the whole group is killed. Nothing of the group outlives COMMAND or the wrapper, even a wrapper
 * killed with SIGKILL. No shell is involved: `-- sh -c '…'` when one is wanted.
 */
export function runWrapped(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  signals: StopSignals,
): Promise<number> {
  const [file = "", ...args] = argv;
  const already = signals.received;
  // A stop asked for before COMMAND started: it never starts, and the run ends as if it had been stopped.
  if (already !== undefined) return Promise.resolve(signalExitCode(already));
  return new Promise((resolve) => {
    const guard = spawn(process.execPath, ["-e", GROUP_GUARD, "--", file, ...args], {
      stdio: ["inherit", "inherit", "inherit", "pipe"],
      env,
      detached: true,
    });
    let reported = "";
    guard.stdio[3]?.on("data", (chunk: Buffer) => {
      reported += chunk.toString("utf8");
    });
    const signalGroup = (signal: NodeJS.Signals) => {
      try {
        if (guard.pid !== undefined) process.kill(-guard.pid, signal);
      } catch {
        // The group is gone already: nothing left to stop.
      }
    };
    let killTimer: NodeJS.Timeout | undefined;
    const stopRelaying = signals.onEach((signal) => {
      signalGroup(signal);
      killTimer ??= setTimeout(() => {
        process.stderr.write(
          `${signals.commandName}: ${file} did not exit within ${STOP_GRACE_MS / 1000} s of ${signal}; killing it\n`,
        );
        signalGroup("SIGKILL");
      }, STOP_GRACE_MS);
    });
    guard.once("close", (guardCode, guardSignal) => {
      stopRelaying();
      clearTimeout(killTimer);
      const outcome = parseReport(reported);
      if (outcome && "error" in outcome) {
        const found = outcome.error !== "ENOENT";
        process.stderr.write(
          `${signals.commandName}: cannot run ${JSON.stringify(file)}: ${found ? outcome.error : "not found (ENOENT)"}\n`,
        );
        return resolve(found ? 126 : 127);
      }
      // Without a report the group was killed (the escalation's SIGKILL) before COMMAND's end was seen.
      const code = outcome ? outcome.code : guardCode;
      const signal = outcome ? outcome.signal : guardSignal;
      resolve(code ?? (signal ? signalExitCode(signal) : 1));
    });
  });
}

function parseReport(text: string): GuardReport | undefined {
  try {
    return text === "" ? undefined : (JSON.parse(text) as GuardReport);
  } catch {
    return undefined;
  }
}

/**
 * How a server command runs once it serves: until the COMMAND it wraps ends (run with `url` in the
 * environment variable `variable`) or, without one, until the first stop signal. The stop that follows is
 * bounded (see StopSignals.bound). Resolves to COMMAND's exit code (0 without one) and what ended the run,
 * for the stopping line.
 */
export async function serveUntilDone(
  command: readonly string[] | undefined,
  signals: StopSignals,
  served: { env: NodeJS.ProcessEnv; variable: string; url: string },
): Promise<{ code: number; ended: string }> {
  if (!command) {
    const signal = await signals.first;
    signals.bound(1);
    return { code: 0, ended: signal };
  }
  const env = { ...served.env, [served.variable]: reachableUrl(served.url) };
  const code = await runWrapped(command, env, signals);
  signals.bound(code || 1);
  return { code, ended: `${command[0]} exited with ${code}` };
}

/** A listening address COMMAND can reach: a wildcard bind (0.0.0.0, ::) is reached through loopback. */
function reachableUrl(listening: string): string {
  const url = new URL(listening);
  if (url.hostname === "0.0.0.0") url.hostname = "127.0.0.1";
  else if (url.hostname === "[::]") url.hostname = "[::1]";
  return url.href.replace(/\/$/, "");
}

import { spawn } from "node:child_process";
import { STOP_GRACE_MS, type StopSignals, signalExitCode } from "./stop-signals.ts";

/**
 * Runs COMMAND (given after `--`) with standard I/O passed through and the extra environment, until it ends;
 * resolves to its exit code, 128 + the signal's number when a signal ended it, or 127 (126) as shells do when
 * it cannot be found (run). Every stop signal the wrapper receives goes on to COMMAND, duplicates included,
 * as init-style wrappers do: COMMAND decides how to stop. If COMMAND is still running STOP_GRACE_MS after the
 * first one, it is killed. No shell is involved: `-- sh -c '…'` when one is wanted.
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
    const child = spawn(file, args, { stdio: "inherit", env });
    let killTimer: NodeJS.Timeout | undefined;
    const stopRelaying = signals.onEach((signal) => {
      child.kill(signal);
      killTimer ??= setTimeout(() => {
        process.stderr.write(
          `${signals.commandName}: ${file} did not exit within ${STOP_GRACE_MS / 1000} s of ${signal}; killing it\n`,
        );
        child.kill("SIGKILL");
      }, STOP_GRACE_MS);
    });
    const finish = (code: number) => {
      stopRelaying();
      clearTimeout(killTimer);
      resolve(code);
    };
    child.once("error", (error: NodeJS.ErrnoException) => {
      // Only a failed start has no pid; a later error (a failed kill) changes nothing of the outcome.
      if (child.pid !== undefined) return;
      const found = error.code !== "ENOENT";
      process.stderr.write(
        `${signals.commandName}: cannot run ${JSON.stringify(file)}: ${found ? (error.code ?? error.message) : "not found (ENOENT)"}\n`,
      );
      finish(found ? 126 : 127);
    });
    child.once("exit", (code, signal) => {
      finish(code ?? (signal ? signalExitCode(signal) : 1));
    });
  });
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

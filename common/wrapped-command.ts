import { spawn } from "node:child_process";
import type { Duplex } from "node:stream";
import { GROUP_GUARD, type GuardReport } from "./group-guard.ts";
import { pathWithPackageCommands } from "./package-commands.ts";
import { STOP_GRACE_MS, type StopSignals, signalExitCode } from "./stop-signals.ts";

/** How COMMAND ended: its exit code, and why it never ran when it could not be. */
export interface WrappedEnd {
  code: number;
  notRun?: string;
}

/**
 * Runs COMMAND (given after `--`) with standard I/O passed through and the extra environment, until it ends;
 * resolves to its exit code, 128 + the signal's number when a signal ended it, or 127 (126) as shells do when
 * it cannot be found (run). COMMAND runs in a process group of its own (common/group-guard.ts), so every
 * stop signal the wrapper receives, duplicates included, goes on to COMMAND and all its children, as
 * init-style wrappers do: COMMAND decides how to stop. If it is still running STOP_GRACE_MS after the first
 * one, the whole group is killed. Nothing of the group outlives COMMAND or the wrapper, even a wrapper
 * killed with SIGKILL, nor on Linux any descendant of COMMAND that left the group (`set -m`, a detached
 * spawn, as Playwright starts browsers), found by its parent chain. No shell is involved: `-- sh -c '…'` when one is wanted.
 */
export function runWrapped(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  signals: StopSignals,
): Promise<WrappedEnd> {
  const [file = "", ...args] = argv;
  const already = signals.received;
  // A stop asked for before COMMAND started: it never starts, and the run ends as if it had been stopped.
  if (already !== undefined) return Promise.resolve({ code: signalExitCode(already) });
  return new Promise((resolve) => {
    const guard = spawn(process.execPath, ["-e", GROUP_GUARD, "--", file, ...args], {
      stdio: ["inherit", "inherit", "inherit", "pipe"],
      env,
      detached: true,
    });
    let reported = "";
    // A socket both ways: the guard's report comes back on it, stops go out on it.
    const link = guard.stdio[3] as Duplex | null;
    link?.on("data", (chunk: Buffer) => {
      reported += chunk.toString("utf8");
    });
    // A guard already gone took its group with it: a stop written to it has nothing left to reach.
    link?.on("error", () => {});
    const signalGroup = (signal: NodeJS.Signals) => {
      try {
        if (guard.pid !== undefined) process.kill(-guard.pid, signal);
      } catch {
        // The group is gone already: nothing left to stop.
      }
    };
    // Through the guard, which finds COMMAND's descendants outside the group before any of them is
    // signalled, and stops them with the group.
    const stop = (signal: NodeJS.Signals) => {
      if (link?.writable) link.write(`${signal}\n`);
      else signalGroup(signal);
    };
    let killTimer: NodeJS.Timeout | undefined;
    let backstop: NodeJS.Timeout | undefined;
    const stopRelaying = signals.onEach((signal) => {
      stop(signal);
      killTimer ??= setTimeout(() => {
        process.stderr.write(
          `${signals.commandName}: ${file} did not exit within ${STOP_GRACE_MS / 1000} s of ${signal}; killing it\n`,
        );
        stop("SIGKILL");
        // Should the guard not end the group itself, the group is killed from here.
        backstop = setTimeout(() => signalGroup("SIGKILL"), GUARD_KILL_WAIT_MS);
      }, STOP_GRACE_MS);
    });
    guard.once("close", (guardCode, guardSignal) => {
      stopRelaying();
      clearTimeout(killTimer);
      clearTimeout(backstop);
      const outcome = parseReport(reported);
      if (outcome && "error" in outcome) {
        const found = outcome.error !== "ENOENT";
        const notRun = `cannot run ${JSON.stringify(file)}: ${found ? outcome.error : "not found (ENOENT)"}`;
        process.stderr.write(`${signals.commandName}: ${notRun}\n`);
        return resolve({ code: found ? 126 : 127, notRun });
      }
      // Without a report the group was killed (the escalation's SIGKILL) before COMMAND's end was seen.
      const code = outcome ? outcome.code : guardCode;
      const signal = outcome ? outcome.signal : guardSignal;
      resolve({ code: code ?? (signal ? signalExitCode(signal) : 1) });
    });
  });
}

// How long the guard has to kill the group itself when asked, before the wrapper does it without it.
const GUARD_KILL_WAIT_MS = 1000;

function parseReport(text: string): GuardReport | undefined {
  try {
    return text === "" ? undefined : (JSON.parse(text) as GuardReport);
  } catch {
    return undefined;
  }
}

/**
 * How a server command runs once it serves: until the COMMAND it wraps ends (run with `url` in the
 * environment variable `variable`, the package's commands first on its PATH) or, without one, until the
 * first stop signal. The stop that follows is
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
  const path = pathWithPackageCommands(served.env.PATH);
  const env = {
    ...served.env,
    [served.variable]: reachableUrl(served.url),
    ...(path !== undefined ? { PATH: path } : {}),
  };
  const { code, notRun } = await runWrapped(command, env, signals);
  signals.bound(code || 1);
  return { code, ended: notRun ?? `${command[0]} exited with ${code}` };
}

/** A listening address COMMAND can reach: a wildcard bind (0.0.0.0, ::) is reached through loopback. */
function reachableUrl(listening: string): string {
  const url = new URL(listening);
  if (url.hostname === "0.0.0.0") url.hostname = "127.0.0.1";
  else if (url.hostname === "[::]") url.hostname = "[::1]";
  return url.href.replace(/\/$/, "");
}

import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";

const MAIN = fileURLToPath(new URL("../server/main.ts", import.meta.url));
/** The start-up line that gives the mock's address. */
export const READY_LINE = /listening on (http:\/\/\S+)/;

export interface MockProcess {
  /** The base address, ending in /v1. */
  url: string;
  child: ChildProcess;
  /** Everything the process has written so far. */
  output(): string;
  /** Sends a signal and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface ExitedProcess {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** What a child has written to its pipes so far, collected as it comes. */
export function capturedOutput(child: ChildProcess): { stdout: () => string; stderr: () => string } {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  return { stdout: () => stdout, stderr: () => stderr };
}

/**
 * How long a mock generating a million orders may take to listen: about 12 s on a quiet machine, and
 * several times that while the rest of the suite runs beside it.
 */
export const MILLION_ORDERS_START_MS = 180_000;

/** Starts `server/main.ts` as a real process on a free port and waits for its start-up line. */
export function startMockProcess(
  args: readonly string[] = [],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 20_000,
): Promise<MockProcess> {
  return startListeningProcess(MAIN, ["--port", "0", ...args], env, timeoutMs);
}

/** Starts a server script (TypeScript or built) that prints "listening on <url>", and waits for that line. */
export async function startListeningProcess(
  script: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 20_000,
): Promise<MockProcess> {
  const child = spawnScript(script, args, env);
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // A process that never listens (blocked on a FIFO, say) must not outlive the test that started it.
      child.kill("SIGKILL");
      reject(new Error(`mock did not start within ${timeoutMs} ms:\n${stderr}`));
    }, timeoutMs);
    child.stdout?.on("data", (chunk) => {
      stdout += chunk;
      const match = READY_LINE.exec(stdout);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`mock exited with ${code} before listening:\n${stderr}`));
    });
  });
  return {
    url,
    child,
    output: () => stdout + stderr,
    async stop(signal = "SIGTERM") {
      // A process already gone (exited, or killed by a signal) has nothing left to wait for.
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const exited = once(child, "exit");
      child.kill(signal);
      const [code] = await exited;
      return code as number | null;
    },
  };
}

/** Runs `server/main.ts` to completion (for options and fixtures that must stop it). */
export async function runMainToExit(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<ExitedProcess> {
  const child = spawnScript(MAIN, args, env);
  const output = capturedOutput(child);
  const [code] = await once(child, "exit");
  return { code: code as number | null, stdout: output.stdout(), stderr: output.stderr() };
}

function spawnScript(script: string, args: readonly string[], env: NodeJS.ProcessEnv): ChildProcess {
  // A built script runs as users run it, without the TypeScript loader (which costs its own start-up).
  const loader = script.endsWith(".ts") ? ["--import", "tsx"] : [];
  return spawn(process.execPath, [...loader, script, ...args], {
    env: { ...process.env, PORT: "", HOST: "", PETSTORE_FIXTURES: "", PETSTORE_API_KEYS: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

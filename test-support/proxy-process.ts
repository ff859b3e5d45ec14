import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { TARGET_KEY } from "./target-server.ts";

export interface ProxyProcess {
  /** The proxy's base address, from its start-up line. */
  url: string;
  child: ChildProcess;
  /** What it wrote to standard output so far: a JSON line per exchange when not on a terminal. */
  stdout(): string;
  /** Sends the signal and waits for the exit code and everything written. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/**
 * `petstore-conformance proxy` as CI starts it, a process of its own stopped with a signal: from the
 * sources or as installed, up to the start-up line on standard error that names its address.
 */
export async function startProxyProcess(
  command: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string },
): Promise<ProxyProcess> {
  const child = spawn(command, [...args], {
    env: options.env,
    ...(options.cwd ? { cwd: options.cwd } : {}),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk) => {
    stdout += chunk;
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr?.on("data", (chunk) => {
      stderr += chunk;
      const match = /listening on (http:\/\/\S+),/.exec(stderr);
      if (match?.[1]) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`the proxy exited ${code}:\n${stderr}`)));
  });
  return {
    url,
    child,
    stdout: () => stdout,
    async stop(signal = "SIGTERM") {
      const exited = once(child, "exit");
      child.kill(signal);
      const [code] = await exited;
      return { code: code as number | null, stdout, stderr };
    },
  };
}

const SOURCE_BIN = new URL("../conformance/bin.ts", import.meta.url).pathname;
/** No proxy from the machine's environment reaches a run unless a test sets one. */
export const NO_PROXY_ENV = {
  http_proxy: "",
  https_proxy: "",
  HTTPS_PROXY: "",
  HTTP_PROXY: "",
  all_proxy: "",
  ALL_PROXY: "",
};

/**
 * `petstore-conformance proxy --port 0 ARGS` from the sources, with no proxy of this machine's environment
 * (`env` on top); `shellPrefix` runs it through `sh -c 'PREFIX; exec …'` (a ulimit, say).
 */
export function startSourceProxy(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; shellPrefix?: string } = {},
): Promise<ProxyProcess> {
  const command = [process.execPath, "--import", "tsx", SOURCE_BIN, "proxy", "--port", "0", ...args];
  const env = { ...process.env, NO_COLOR: "", ...NO_PROXY_ENV, ...options.env };
  if (options.shellPrefix === undefined)
    return startProxyProcess(process.execPath, command.slice(1), { env });
  const quoted = command.map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(" ");
  return startProxyProcess("sh", ["-c", `${options.shellPrefix}; exec ${quoted}`], { env });
}

/**
 * Waits until the proxy has written a live line for `count` exchanges (one as each is judged, a large
 * list's after its last byte), or `withinMs` passed: a stop before a verdict would report it cut off.
 */
export async function liveLinesWritten(proxy: ProxyProcess, count: number, withinMs = 60_000): Promise<void> {
  const lines = () =>
    proxy
      .stdout()
      .split("\n")
      .filter((line) => line.startsWith("{")).length;
  for (let waited = 0; lines() < count && waited < withinMs; waited += 20) await sleep(20);
}

/** A list through the proxy at `base`, read to its end and thrown away: how many bytes came. */
export function listBytesThrough(base: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    request(`${base}/store/orders`, { headers }, (answer) => {
      let bytes = 0;
      answer.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
      });
      answer.on("end", () => resolve(bytes));
      answer.on("error", reject);
    })
      .on("error", reject)
      .end();
  });
}

/**
 * One list through a proxy (run from source, `--fail-on-violation`, a JSON report to `reportFile`) in front
 * of an upstream that answers every request with `headers` and `body`: the bytes its client got, the
 * proxy's exit code at SIGTERM once the list was judged, and its report as parsed JSON.
 */
export async function oneListThroughProxy(
  headers: Record<string, string>,
  body: Buffer,
  reportFile: string,
): Promise<{ forwarded: number; code: number | null; report: unknown }> {
  const server = createServer((_incoming, response) => {
    response.writeHead(200, headers);
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const proxy = await startSourceProxy([
    "--upstream",
    `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    "--fail-on-violation",
    "--reporter",
    `json:${reportFile}`,
  ]);
  let forwarded = 0;
  let code: number | null = null;
  try {
    forwarded = await listBytesThrough(proxy.url, { authorization: `Bearer ${TARGET_KEY}` });
    await liveLinesWritten(proxy, 1);
  } finally {
    ({ code } = await proxy.stop("SIGTERM"));
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return { forwarded, code, report: JSON.parse(readFileSync(reportFile, "utf8")) };
}

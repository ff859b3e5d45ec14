import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { tempFolder } from "../common/temp-folder.ts";
import { parseExact, stringifyExact } from "../contract/exact-json.ts";
import { OPENAPI_PATH } from "../contract/openapi.ts";
import { freePort } from "../test-support/free-port.ts";

/**
 * Other tools that speak this API, started as real processes on loopback: Prism (mock and validating
 * proxy) and json-server. Tests use them as independent judges and as peers; the benchmark measures them.
 */

const BIN = fileURLToPath(new URL("../tools/node_modules/.bin/", import.meta.url));
const START_TIMEOUT_MS = 60_000;

export interface PeerProcess {
  /** The address clients use; see each starter for whether it ends in /v1. */
  url: string;
  pid: number | undefined;
  output(): string;
  stop(): Promise<void>;
}

/** Starts a tool from tools/node_modules/.bin; it is ready when its output matches, or (`"http"`) when it answers. */
async function startTool(
  command: string,
  args: string[],
  ready: RegExp | "http",
  url: string,
): Promise<PeerProcess> {
  const child: ChildProcess = spawn(join(BIN, command), args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk;
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${command} did not start within ${START_TIMEOUT_MS} ms:\n${output}`)),
      START_TIMEOUT_MS,
    );
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    if (ready === "http") {
      waitForHttp(url).then(done, reject);
    } else {
      const check = () => {
        if (ready.test(output)) done();
      };
      child.stdout?.on("data", check);
      child.stderr?.on("data", check);
    }
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited with ${code} before it was ready:\n${output}`));
    });
  });
  return {
    url,
    pid: child.pid,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/**
 * Prism routes by the paths of openapi.yaml (`/store/orders`) and ignores the `/v1` of `servers`, so its
 * clients use the bare address; as a proxy it appends the path to the upstream base, which ends in /v1.
 */
export async function startPrismMock(options: { quiet?: boolean } = {}): Promise<PeerProcess> {
  const port = await freePort();
  const args = [
    "mock",
    OPENAPI_PATH,
    "-p",
    String(port),
    "-h",
    "127.0.0.1",
    ...(options.quiet ? ["-v", "silent"] : []),
  ];
  return startTool("prism", args, options.quiet ? "http" : /Prism is listening/, `http://127.0.0.1:${port}`);
}

export async function startPrismProxy(
  upstream: string,
  options: { errors?: boolean; validateRequest?: boolean } = {},
): Promise<PeerProcess> {
  const port = await freePort();
  const args = ["proxy", OPENAPI_PATH, upstream, "-p", String(port), "-h", "127.0.0.1"];
  if (options.errors) args.push("--errors");
  if (options.validateRequest === false) args.push("--validate-request", "false");
  return startTool("prism", args, /Prism is listening/, `http://127.0.0.1:${port}`);
}

/**
 * json-server 0.17 serving a fixture file's orders as its database, under /v1/store/ as this API's paths
 * are. It reads its database with JSON.parse, so ids above 2^53 arrive rounded: that is json-server.
 */
export async function startJsonServer(
  fixturePath: string,
  options: { quiet?: boolean } = {},
): Promise<PeerProcess> {
  const port = await freePort();
  const folder = tempFolder("json-server-");
  const fixture = parseExact(readFileSync(fixturePath, "utf8")) as { orders: unknown[] };
  writeFileSync(join(folder, "db.json"), stringifyExact({ orders: fixture.orders }));
  writeFileSync(join(folder, "routes.json"), JSON.stringify({ "/v1/store/*": "/$1" }));
  const args = [
    join(folder, "db.json"),
    "--routes",
    join(folder, "routes.json"),
    "-p",
    String(port),
    "-H",
    "127.0.0.1",
    ...(options.quiet ? ["--quiet"] : []),
  ];
  return startTool(
    "json-server",
    args,
    // Its banner is printed before its server listens, so only an answer says it is up.
    "http",
    `http://127.0.0.1:${port}/v1`,
  );
}

/** Waits until something answers HTTP at the address (for tools started with their logs off). */
async function waitForHttp(url: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`no answer from ${url}`);
}

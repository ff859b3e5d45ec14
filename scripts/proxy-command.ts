import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { tempFolder } from "../common/temp-folder.ts";
import type { PeerProcess } from "./peers.ts";

const CONFORMANCE_CLI = join(
  fileURLToPath(new URL("../", import.meta.url)),
  "dist/bin/petstore-conformance.js",
);

/**
 * The built `petstore-conformance proxy` as CI runs it (stdout piped, so it formats a JSON line per
 * exchange, here thrown away), up to its start-up line on standard error.
 */
export async function startProxyCommand(upstream: string, cli = CONFORMANCE_CLI): Promise<PeerProcess> {
  const child = spawn(
    process.execPath,
    // The report goes to a file of its own: builds compared with this one may replace a device at its name.
    [
      cli,
      "proxy",
      "--upstream",
      upstream,
      "--port",
      "0",
      "--reporter",
      `json:${join(tempFolder("bench-proxy-"), "proxy.json")}`,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      const match = /listening on (http:\/\/[^\s,]+)/.exec(stderr);
      if (match?.[1]) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`the proxy exited ${code}: ${stderr}`)));
  });
  return {
    url,
    pid: child.pid,
    output: () => stderr,
    stop: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

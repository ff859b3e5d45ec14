import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseDocument } from "yaml";
import { tempFolder } from "../common/temp-folder.ts";
import { OPENAPI_PATH } from "../contract/openapi.ts";

const DREDD = fileURLToPath(new URL("../tools/node_modules/.bin/dredd", import.meta.url));
export const DREDD_HOOKS = fileURLToPath(new URL("../server/test/dredd-hooks.cjs", import.meta.url));

export interface DreddRun {
  code: number | null;
  output: string;
  passed: string[];
  failed: string[];
  /** The closing "complete: N passing, …" line. */
  summary: string;
}

/**
 * Dredd refuses a required path parameter without an example before any hook runs, and the contract has
 * none (the spec gives none), so Dredd reads a copy of openapi.yaml with `example` set on orderId; the hooks
 * then choose the real id per transaction. Nothing else differs from openapi.yaml.
 */
export function dreddDocument(): string {
  const document = parseDocument(readFileSync(OPENAPI_PATH, "utf8"));
  const parameters = document.getIn(["paths", "/store/orders/{orderId}", "delete", "parameters"]) as {
    items: Array<{ get(key: string): unknown; set(key: string, value: unknown): void }>;
  };
  const orderId = parameters.items.find((parameter) => parameter.get("name") === "orderId");
  if (!orderId) throw new Error("openapi.yaml has no orderId parameter");
  orderId.set("example", 1);
  const path = join(tempFolder("dredd-"), "openapi.yaml");
  writeFileSync(path, document.toString());
  return path;
}

export function runDredd(
  baseUrl: string,
  ids: { apiKey: string; pending: string; shipped: string; missing: string; jsonContentType?: string },
): Promise<DreddRun> {
  const child = spawn(DREDD, [dreddDocument(), baseUrl, "--hookfiles", DREDD_HOOKS, "--color", "false"], {
    env: {
      ...process.env,
      DREDD_API_KEY: ids.apiKey,
      DREDD_PENDING_ID: ids.pending,
      DREDD_SHIPPED_ID: ids.shipped,
      DREDD_MISSING_ID: ids.missing,
      DREDD_JSON_CONTENT_TYPE: ids.jsonContentType ?? "",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  return new Promise((resolve) => {
    child.on("exit", (code) => {
      const lines = output.split("\n");
      const transactions = (verdict: string) => [
        ...new Set(
          lines
            .map((line) => new RegExp(`^${verdict}: ((?:GET|DELETE) \\(\\d+\\) \\S+)`).exec(line)?.[1])
            .filter((name): name is string => name !== undefined),
        ),
      ];
      resolve({
        code,
        output,
        passed: transactions("pass"),
        failed: transactions("fail"),
        summary: lines.find((line) => /^complete: .*passing/.test(line)) ?? "",
      });
    });
  });
}

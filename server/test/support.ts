import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { Agent, type IncomingHttpHeaders, request } from "node:http";
import { join } from "node:path";
import { tempFolder } from "../../common/temp-folder.ts";
import { loadContract, loadControlContract } from "../../contract/openapi.ts";
import { createServer, type MockServerOptions } from "../app.ts";
import { ERROR_CODES, type ErrorCode, statusesOf } from "../core/errors.ts";
import { createMockCore, type MockCore, type MockCoreOptions } from "../core/mock.ts";
import { loadDashboardAssets } from "../dashboard-assets.ts";
import { loadFixtureFile } from "../fixtures.ts";
import { BUNDLED_FIXTURES } from "../options.ts";

export const DEV_KEY = "dev-key-123";
export const AUTH = { authorization: `Bearer ${DEV_KEY}` };
export const contract = loadContract();
export const controlContract = loadControlContract();
export const bundledFixture = await loadFixtureFile(BUNDLED_FIXTURES, contract);

/** The mock's core on the bundled fixtures, control API on unless `control` says otherwise. */
export function bundledCore(overrides: Partial<MockCoreOptions> = {}): MockCore {
  return createMockCore({
    seed: bundledFixture.seed,
    apiKeys: bundledFixture.apiKeys,
    contract,
    control: { contract: controlContract, assets: loadDashboardAssets() },
    ...overrides,
  });
}

export interface Injected {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** The Node transport listening on 127.0.0.1, and one request at a time sent to it over a real socket. */
export interface ListeningApp {
  port: number;
  inject(options: {
    method: string;
    url: string;
    headers?: Record<string, string>;
    payload?: string;
  }): Promise<Injected>;
  close(): Promise<void>;
}

/** The mock's Node transport in-process on the bundled fixtures, on an ephemeral port, with a world of its own. */
export async function bundledApp(
  overrides: Partial<MockCoreOptions> & Omit<Partial<MockServerOptions>, "core"> = {},
): Promise<ListeningApp> {
  const { log, requestTimeoutMs, headersTimeoutMs, timeoutCheckIntervalMs, ...core } = overrides;
  const app = createServer({
    core: bundledCore(core),
    ...(log ? { log } : {}),
    ...(requestTimeoutMs !== undefined ? { requestTimeoutMs } : {}),
    ...(headersTimeoutMs !== undefined ? { headersTimeoutMs } : {}),
    ...(timeoutCheckIntervalMs !== undefined ? { timeoutCheckIntervalMs } : {}),
  });
  const { port } = await app.listen(0, "127.0.0.1");
  const agent = new Agent({ keepAlive: true });
  return {
    port,
    inject: ({ method, url, headers = {}, payload }) =>
      new Promise((resolve, reject) => {
        // Node frames a DELETE body only when told its length; without it the bytes would read as a next request.
        const framed =
          payload === undefined
            ? headers
            : { ...headers, "content-length": String(Buffer.byteLength(payload)) };
        const sent = request(
          { host: "127.0.0.1", port, method, path: url, headers: framed, agent },
          (response) => {
            let body = "";
            response.setEncoding("utf8");
            response.on("data", (chunk: string) => {
              body += chunk;
            });
            response.on("end", () =>
              resolve({ statusCode: response.statusCode as number, headers: response.headers, body }),
            );
          },
        );
        sent.on("error", reject);
        sent.end(payload);
      }),
    async close() {
      agent.destroy();
      await app.close();
    },
  };
}

/** Writes a fixture file into a fresh temporary folder and returns its path. */
export function writeFixture(content: string | Uint8Array | object, name = "fixture.json"): string {
  const path = join(tempFolder("petstore-fixture-"), name);
  const bytes =
    typeof content === "string" || content instanceof Uint8Array ? content : JSON.stringify(content);
  writeFileSync(path, bytes);
  return path;
}

const validateErrorRecord = contract.schema("Error");

/** An error answer as docs/mock-server.md promises it: JSON, an Error record, a listed code sent with this status. */
export function assertListedError(
  status: number,
  contentType: string | null | undefined,
  body: string,
): void {
  assert.equal(contentType, "application/json; charset=utf-8");
  const record = JSON.parse(body) as { code: string; status: number };
  assert.ok(validateErrorRecord(record), `not an Error record: ${body}`);
  assert.equal(record.status, status);
  assert.ok(
    record.code in ERROR_CODES && statusesOf(record.code as ErrorCode).includes(status),
    `undocumented code ${record.code} for ${status}`,
  );
}

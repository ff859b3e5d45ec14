import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { brotliCompressSync, constants } from "node:zlib";
import { tempFolder } from "../../common/temp-folder.ts";
import { residentMemory } from "../../test-support/process-memory.ts";
import {
  listBytesThrough,
  liveLinesWritten,
  oneListThroughProxy,
  startSourceProxy,
} from "../../test-support/proxy-process.ts";
import { TARGET_KEY } from "../../test-support/target-server.ts";
import type { Report } from "../reports/report.ts";

const folder = tempFolder("conformance-coded-bodies-");
const MiB = 1024 * 1024;
const LISTS = 16;

/** A list of valid orders of about `bytes`, in brotli with the largest window a stream may ask for. */
function brotliList(bytes: number): Buffer {
  const parts: string[] = [];
  let size = 1;
  for (let id = 1; size < bytes; id++) {
    const order = `{"id":${id},"petId":${(id * 7919) % 100_003},"quantity":${id % 7},"shipDate":"2026-01-01T00:00:00Z","complete":false}`;
    parts.push(order);
    size += order.length + 1;
  }
  const plain = Buffer.from(`[${parts.join(",")}]`);
  return brotliCompressSync(plain, {
    params: {
      [constants.BROTLI_PARAM_LGWIN]: 24,
      [constants.BROTLI_PARAM_QUALITY]: 1,
      [constants.BROTLI_PARAM_SIZE_HINT]: plain.length,
    },
  });
}

/**
 * An upstream whose lists come in brotli: each sends its first half, waits until all `LISTS` are that far
 * (so the proxy decodes them at once, however the machine schedules their bytes), then the rest.
 */
async function brotliUpstream() {
  const coded = brotliList(40 * MiB);
  const half = coded.subarray(0, coded.length >> 1);
  let arrived = 0;
  let allThere: () => void = () => {};
  const together = new Promise<void>((resolve) => {
    allThere = resolve;
  });
  const server = createServer((_incoming, response) => {
    response.writeHead(200, { "content-type": "application/json", "content-encoding": "br" });
    response.write(half, () => {
      if (++arrived === LISTS) allThere();
      void together.then(() => response.end(coded.subarray(half.length)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A list through the proxy, read to its end and thrown away: its coded bytes. */
function drain(base: string): Promise<number> {
  return listBytesThrough(base, { authorization: `Bearer ${TARGET_KEY}` });
}

describe("coded answers under the proxy's memory budget", () => {
  it(`${LISTS} brotli lists with 16 MiB windows at once at 64MiB: the decoders' state is reserved, bounded`, async () => {
    const upstream = await brotliUpstream();
    const reportFile = join(folder, "brotli.json");
    const proxy = await startSourceProxy([
      "--upstream",
      upstream.url,
      "--max-memory",
      "64MiB",
      "--reporter",
      `json:${reportFile}`,
    ]);
    let grown = 0;
    try {
      const idle = residentMemory(proxy.child.pid).peak;
      const read = await Promise.all(Array.from({ length: LISTS }, () => drain(proxy.url)));
      await liveLinesWritten(proxy, LISTS);
      assert.ok(new Set(read).size === 1 && (read[0] as number) > 0, "every list reaches its client whole");
      assert.equal(proxy.child.exitCode, null, "the proxy is alive");
      grown = residentMemory(proxy.child.pid).peak - idle;
    } finally {
      await proxy.stop("SIGTERM");
      await upstream.close();
    }
    if (process.env.HELD_BYTES_VERBOSE) process.stderr.write(`grew ${Math.round(grown / MiB)} MiB\n`);
    assert.ok(grown <= 164 * MiB, `grew ${Math.round(grown / MiB)} MiB past its start`);
    const report = JSON.parse(readFileSync(reportFile, "utf8")) as Report;
    const body = report.scenarios
      .flatMap((scenario) => scenario.checks)
      .find((check) => check.id === "listOrders.body");
    assert.notEqual(body?.status, "failed", body?.message);
    assert.match(
      JSON.stringify(report),
      /over the memory budget \(64 MiB, --max-memory\): decoding its Content-Encoding \(br\) needs 16448 KiB more than the account has left/,
    );
  });

  it("a coding the proxy does not read (zstd, as browsers ask for) is forwarded unchanged, not judged, never failed", async () => {
    const zstd = Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), Buffer.from("not decoded here")]);
    const through = await oneListThroughProxy(
      { "content-type": "application/json", "content-encoding": "zstd" },
      zstd,
      join(folder, "zstd.json"),
    );
    assert.equal(through.forwarded, zstd.length, "the client gets the bytes as they came");
    const { code } = through;
    const report = through.report as Report;
    assert.equal(report.summary.failed, 0, JSON.stringify(report.scenarios[0]?.checks));
    assert.match(
      JSON.stringify(report),
      /Content-Encoding \\"zstd\\" is not one petstore-conformance reads \(gzip, x-gzip, deflate, br\): forwarded unchanged, not judged/,
    );
    assert.equal(code, 2, "not judged whole: the gate neither passes nor fails it");
    // The list went through: the coverage says so, and why nothing of it was judged, not that none came.
    const listed = report.coverage?.find((row) => row.operation === "listOrders" && row.status === 200);
    assert.equal(listed?.seen, 1);
    const list = report.scenarios.find((scenario) => scenario.id === "listOrders");
    assert.match(
      list?.reason ?? "",
      /^1 request for this operation went through the proxy, forwarded without being judged \(.*zstd/,
    );
    assert.match(report.traffic?.firstJudgedInPart ?? "", /^#1 GET \/v1\/store\/orders → 200: .*zstd/);
  });
});

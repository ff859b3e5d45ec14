import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { gzipSync } from "node:zlib";
import { tempFolder } from "../../common/temp-folder.ts";
import { oneListThroughProxy } from "../../test-support/proxy-process.ts";
import type { Report } from "../reports/report.ts";

const folder = tempFolder("conformance-coding-chain-");
const LIST = Buffer.from(
  '[{"id":1,"petId":7,"quantity":1,"shipDate":"2026-01-01T00:00:00.000Z","complete":false}]',
);

/** The proxy's report and exit code for one list the upstream sends in `layers` gzip codings. */
async function listInLayers(layers: number, contentEncoding = Array(layers).fill("gzip").join(", ")) {
  let body = LIST;
  for (let layer = 0; layer < layers; layer++) body = gzipSync(body);
  const through = await oneListThroughProxy(
    { "content-type": "application/json", "content-encoding": contentEncoding },
    body,
    join(folder, `layers-${layers}.json`),
  );
  assert.equal(through.forwarded, body.length, "the client gets the bytes as they came");
  return { code: through.code, report: through.report as Report };
}

describe("a chain of content codings through the proxy", () => {
  it("judges a list coded five times, as many as curl reads", async () => {
    const { code, report } = await listInLayers(5);
    assert.equal(report.summary.failed, 0, JSON.stringify(report.scenarios[0]?.checks));
    assert.doesNotMatch(JSON.stringify(report), /codings in a row/);
    assert.equal(code, 0);
  });

  it("forwards a list coded more than five times unchanged, not judged (exit 2), whatever the chain's length", async () => {
    for (const layers of [6, 60]) {
      const { code, report } = await listInLayers(layers);
      assert.equal(report.summary.failed, 0, JSON.stringify(report.scenarios[0]?.checks));
      assert.match(
        JSON.stringify(report),
        /Content-Encoding names more than 5 codings in a row, more than petstore-conformance reads \(as curl\): forwarded unchanged, not judged/,
      );
      assert.equal(code, 2, `${layers} codings: not judged whole, so the gate neither passes nor fails`);
    }
  });

  it("reads a coding named as a property every object has as a coding not read", async () => {
    const { code, report } = await listInLayers(1, "gzip, constructor");
    assert.match(
      JSON.stringify(report),
      /Content-Encoding \\"constructor\\" is not one petstore-conformance reads/,
    );
    assert.equal(code, 2);
  });
});

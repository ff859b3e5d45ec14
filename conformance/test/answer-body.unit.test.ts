import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { MemoryBudget } from "../judging/memory-budget.ts";
import { BodyReader, type ReadingStop } from "../target/answer-body.ts";

describe("a body read as it arrives", () => {
  it("pauses the connection once while its decoders catch up, however many chunks come meanwhile", async () => {
    // Text that does not compress: many coded chunks, under the 1 MiB an answer not a list is read to.
    const body = Buffer.from(randomBytes(384 * 1024).toString("base64"));
    const coded = gzipSync(body);
    const pauses: boolean[] = [];
    const stops: ReadingStop[] = [];
    let resumed: (() => void) | undefined;
    const reader = new BodyReader(8 * 1024 * 1024, undefined, "gzip", {
      stopped: (stop) => stops.push(stop),
      pause: (paused) => {
        pauses.push(paused);
        if (!paused) resumed?.();
      },
    });
    // A connection as node:http's is: paused, it still hands over the chunks it had read.
    const lag = 3;
    let late = 0;
    for (let at = 0; at < coded.length; at += 1024) {
      if (pauses.at(-1) === true && late++ >= lag) {
        await new Promise<void>((resolve) => {
          resumed = resolve;
        });
        late = 0;
      }
      reader.add(coded.subarray(at, at + 1024));
    }
    await new Promise<void>((resolve) => reader.ended(resolve));
    assert.ok(pauses.length >= 2, "the decoders fell behind");
    assert.deepEqual(
      pauses,
      pauses.map((_, index) => index % 2 === 0),
      "paused once, resumed once, in turn",
    );
    assert.deepEqual(stops, []);
    assert.equal(reader.response(200, {}, undefined).body, body.toString());
  });

  it("reads an empty body as empty whatever its Content-Encoding says", () => {
    const reader = new BodyReader(1024, undefined, "zstd", {
      stopped: () => assert.fail("nothing to stop"),
      pause: () => assert.fail("nothing to wait for"),
    });
    const response = reader.response(204, { "content-encoding": "zstd" }, undefined);
    assert.equal(response.body, "");
    assert.equal(response.received, 0);
  });

  it("reads no body whose decoders would not fit in the client's room: said not read, never failed", () => {
    const room = new MemoryBudget(1024 * 1024);
    const stops: ReadingStop[] = [];
    const window22 = brotliCompressSync(Buffer.from("[]"), {
      params: { [constants.BROTLI_PARAM_LGWIN]: 22 },
    });
    const reader = new BodyReader(1024, undefined, "br", {
      stopped: (stop) => stops.push(stop),
      pause: () => {},
      decoderRoom: room,
    });
    reader.add(window22);
    assert.deepEqual(stops.length, 1);
    assert.match(
      (stops[0] as { notRead: string }).notRead,
      /^the body could not be read: decoding its Content-Encoding \(br\) needs 4160 KiB more than the account has left$/,
    );
    assert.equal(room.held, 0);
  });
});

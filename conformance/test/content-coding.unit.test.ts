import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { brotliCompressSync, constants, deflateSync, gzipSync } from "node:zlib";
import fc from "fast-check";
import { MemoryBudget } from "../judging/memory-budget.ts";
import {
  brotliWindowBits,
  type CodingFailure,
  DecoderChain,
  decoderStateBytes,
  MOST_CODINGS,
  readCodings,
  unreadCoding,
} from "../target/content-coding.ts";

const CODERS: Readonly<Record<string, (body: Buffer) => Buffer>> = {
  gzip: (body) => gzipSync(body),
  "x-gzip": (body) => gzipSync(body),
  deflate: (body) => deflateSync(body),
  br: (body) => brotliCompressSync(body),
  identity: (body) => body,
};

/** A body coded in `codings`, applied in their order. */
function coded(body: Buffer, codings: readonly string[]): Buffer {
  return codings.reduce((bytes, coding) => (CODERS[coding] as (body: Buffer) => Buffer)(bytes), body);
}

/** What a chain made of `contentEncoding` gives for `chunks`: the decoded bytes, and its failures. */
async function decode(
  contentEncoding: string,
  chunks: readonly Buffer[],
): Promise<{ decoded: Buffer; failures: CodingFailure[]; afterFailure: number }> {
  const read = readCodings(contentEncoding);
  assert.ok("codings" in read);
  // As the readers do: a body in no coding but identity goes as it is.
  if (read.codings.length === 0) return { decoded: Buffer.concat(chunks), failures: [], afterFailure: 0 };
  const decoded: Buffer[] = [];
  const failures: CodingFailure[] = [];
  let afterFailure = 0;
  const chain = new DecoderChain(read.codings, {
    data: (chunk) => {
      if (failures.length > 0) afterFailure++;
      decoded.push(chunk);
    },
    failed: (failure) => failures.push(failure),
  });
  for (const chunk of chunks) chain.write(chunk);
  await chain.end();
  return { decoded: Buffer.concat(decoded), failures, afterFailure };
}

/** Bytes cut at the given places, in order. */
function split(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const at = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  return [0, ...at].map((from, index) => bytes.subarray(from, at[index] ?? bytes.length));
}

const chains = fc.array(fc.constantFrom(...Object.keys(CODERS)), { minLength: 1, maxLength: 3 });
// Text that compresses (repeated words) and bytes that do not.
const bodies = fc.oneof(
  fc.uint8Array({ maxLength: 4096 }).map((bytes) => Buffer.from(bytes)),
  fc
    .tuple(fc.string({ maxLength: 40 }), fc.integer({ min: 1, max: 2000 }))
    .map(([word, times]) => Buffer.from(word.repeat(times))),
);
const cuts = fc.array(fc.nat(), { maxLength: 6 });

describe("a body's content codings decoded", () => {
  it("reads a Content-Encoding's codings in order, identity left out, and names the first not read", () => {
    assert.deepEqual(readCodings(" GZIP , identity,br"), { codings: ["gzip", "br"] });
    assert.deepEqual(readCodings(undefined), { codings: [] });
    assert.deepEqual(readCodings("identity"), { codings: [] });
    assert.deepEqual(readCodings("gzip, zstd, compress"), { unread: { coding: "zstd" } });
  });

  it("reads no name an object inherits as a coding", () => {
    for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf"])
      assert.deepEqual(readCodings(`gzip, ${name}`), { unread: { coding: name.toLowerCase() } }, name);
  });

  it("reads up to five codings in a row, as curl does, and says a longer chain is not read", () => {
    const spelled = fc.constantFrom("gzip", "GZIP", "x-gzip", "deflate", "br", " gzip ");
    const fillers = fc.array(fc.constantFrom("", " ", "identity"), { maxLength: 2 });
    const chain = (count: { min: number; max: number }) =>
      fc.array(fc.tuple(spelled, fillers), { minLength: count.min, maxLength: count.max });
    const header = (links: [string, string[]][]) =>
      links.flatMap(([coding, more]) => [coding, ...more]).join(",");
    fc.assert(
      fc.property(chain({ min: 1, max: MOST_CODINGS }), (links) => {
        const read = readCodings(header(links));
        assert.ok("codings" in read);
        assert.equal(read.codings.length, links.length);
      }),
    );
    fc.assert(
      fc.property(chain({ min: MOST_CODINGS + 1, max: 3000 }), (links) => {
        const read = readCodings(header(links));
        assert.ok("unread" in read);
        assert.deepEqual(read.unread, { tooMany: true });
        assert.match(unreadCoding(read.unread), /more than 5 codings in a row/);
      }),
      { numRuns: 40 },
    );
  });

  it("never sets up a decoder for each of more codings than are read", () => {
    const events = { data: () => {}, failed: () => {} };
    assert.throws(() => new DecoderChain(Array(MOST_CODINGS + 1).fill("gzip"), events), RangeError);
    new DecoderChain(Array(MOST_CODINGS).fill("gzip"), events).destroy();
  });

  it("gives back any body coded in any chain, in any chunks, and fails nothing", async () => {
    await fc.assert(
      fc.asyncProperty(chains, bodies, cuts, async (codings, body, at) => {
        const sent = coded(body, codings);
        const { decoded, failures } = await decode(codings.join(", "), split(sent, at));
        assert.deepEqual(failures, []);
        assert.ok(decoded.equals(body));
      }),
      { numRuns: 150 },
    );
  });

  it("fails a coded body followed by bytes of its own, whatever they are", async () => {
    const coded_ = chains.filter((codings) => codings.some((coding) => coding !== "identity"));
    const junk = fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => Buffer.from(bytes));
    await fc.assert(
      fc.asyncProperty(coded_, bodies, junk, cuts, async (codings, body, extra, at) => {
        // The junk goes on after the outermost coding's data, the one applied last.
        const sent = Buffer.concat([coded(body, codings), extra]);
        const { failures } = await decode(codings.join(", "), split(sent, at));
        assert.equal(failures.length, 1);
      }),
      { numRuns: 100 },
    );
  });

  it("never throws on a corrupt body: it ends, once failed at most, and gives nothing after a failure", async () => {
    const flips = fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), {
      minLength: 1,
      maxLength: 8,
    });
    await fc.assert(
      fc.asyncProperty(chains, bodies, flips, fc.nat(), cuts, async (codings, body, changes, keep, at) => {
        const sent = Buffer.from(coded(body, codings));
        for (const [place, mask] of changes)
          if (sent.length > 0) sent[place % sent.length] = (sent[place % sent.length] as number) ^ mask;
        const truncated = sent.subarray(0, keep % (sent.length + 1) || sent.length);
        const { failures, afterFailure } = await decode(codings.join(", "), split(truncated, at));
        assert.ok(failures.length <= 1);
        assert.equal(afterFailure, 0);
      }),
      { numRuns: 150 },
    );
  });

  it("stops decoding once destroyed: a bomb gives no more than its reader took", async () => {
    const bomb = gzipSync(Buffer.alloc(256 * 1024 * 1024));
    let decoded = 0;
    const chain: DecoderChain = new DecoderChain(["gzip"], {
      data: (chunk) => {
        decoded += chunk.length;
        if (decoded > 1024 * 1024) chain.destroy();
      },
      failed: () => assert.fail("a bomb is no corrupt body"),
    });
    chain.write(bomb);
    await chain.end();
    assert.ok(decoded <= 1024 * 1024 + 64 * 1024, `${decoded} bytes`);
  });

  it("reads a brotli stream's window from its first byte, for every window a stream may ask for", () => {
    const body = Buffer.alloc(1 << 20, "order ");
    for (let bits = 10; bits <= 24; bits++) {
      const stream = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_LGWIN]: bits } });
      assert.equal(brotliWindowBits(stream[0]), bits, `lgwin ${bits}`);
    }
    assert.equal(brotliWindowBits(undefined), 24, "unknown: the largest");
  });

  it("reserves every decoder's state before it takes a byte, refuses past the room, and gives it all back", async () => {
    const room = new MemoryBudget(1024 * 1024);
    const small = brotliCompressSync(Buffer.from("[]"), { params: { [constants.BROTLI_PARAM_LGWIN]: 16 } });
    const events = { data: () => {}, failed: () => {}, overBudget: (why: string) => refusals.push(why) };
    const refusals: string[] = [];
    const fits = new DecoderChain(["br"], events, room);
    fits.write(small);
    assert.equal(room.held, decoderStateBytes("br", small[0]));
    const large = brotliCompressSync(Buffer.from("[]"), { params: { [constants.BROTLI_PARAM_LGWIN]: 22 } });
    const refused = new DecoderChain(["gzip", "br"], events, room);
    refused.write(large);
    assert.deepEqual(refusals.length, 1, "a 4 MiB window does not fit in what is left of 1 MiB");
    assert.match(refusals[0] as string, /^decoding its Content-Encoding \(gzip, br\) needs /);
    assert.equal(room.held, decoderStateBytes("br", small[0]), "nothing is held for the chain refused");
    await fits.end();
    assert.equal(room.held, 0, "a chain that ended gave its state back");
  });
});

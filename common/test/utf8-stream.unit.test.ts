import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { firstNonUtf8 } from "../utf8.ts";
import { Utf8Stream, utf8Problem } from "../utf8-stream.ts";

/** The first offset at which a fatal decoder gives up, by decoding ever longer prefixes: slow and plain. */
function oracle(bytes: Uint8Array): number {
  const fatal = new TextDecoder("utf-8", { fatal: true });
  try {
    fatal.decode(bytes);
    return -1;
  } catch {
    // The first character that does not decode starts where the longest prefix that decodes whole ends.
    for (let end = bytes.length; end > 0; end--) {
      try {
        fatal.decode(bytes.subarray(0, end));
        return end;
      } catch {}
    }
    return 0;
  }
}

// Bytes near UTF-8: ASCII, whole characters of every length, and the pieces that break them.
const piece = fc.oneof(
  fc.constantFrom([0x41], [0x7b], [0xc3, 0xa9], [0xe2, 0x82, 0xac], [0xf0, 0x9f, 0x98, 0x80]),
  fc.constantFrom([0xff], [0xc0, 0x80], [0xe0, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80]),
  fc.constantFrom([0xc3], [0xe2, 0x82], [0x80], [0xf0, 0x9f, 0x98], [0xf8, 0x88, 0x80, 0x80, 0x80]),
);
const bytes = fc.array(piece, { maxLength: 20 }).map((pieces) => Uint8Array.from(pieces.flat()));

describe("UTF-8 as it streams", () => {
  it("finds the first byte that begins no character, as a fatal decoder reads it, however the bytes are cut", () => {
    fc.assert(
      fc.property(bytes, fc.array(fc.nat(40), { maxLength: 6 }), (all, cuts) => {
        const expected = oracle(all);
        assert.equal(firstNonUtf8(all, false), expected);
        const stream = new Utf8Stream();
        let found = -1;
        const points = [...new Set(cuts.map((cut) => Math.min(cut, all.length)))].sort((a, b) => a - b);
        let from = 0;
        for (const point of [...points, all.length]) {
          if (found === -1) found = stream.write(all.subarray(from, point));
          from = point;
        }
        if (found === -1) found = stream.end();
        assert.equal(found, expected, `${[...all].map((byte) => byte.toString(16))} cut at ${points}`);
      }),
      { numRuns: 5_000 },
    );
  });

  it("names the byte and the rule", () => {
    assert.equal(utf8Problem(new TextEncoder().encode('{"a":"é€😀"}')), undefined);
    assert.equal(
      utf8Problem(Uint8Array.from([0x7b, 0x22, 0xff, 0x22])),
      "it is not UTF-8, which JSON must be (RFC 8259 §8.1): the character at byte 2 (0xff) is not one",
    );
  });
});

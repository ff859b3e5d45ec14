import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fullFormats } from "ajv-formats/dist/formats.js";
import fc from "fast-check";
import { certainDateTime, formats } from "../formats.ts";

const ajvDateTime = (fullFormats["date-time"] as { validate: (text: string) => boolean }).validate;

// Date-times near the usual shape: each part drawn from valid, edge and broken values, in ASCII and not.
const part = (...values: string[]) => fc.constantFrom(...values);
const dateTimeLike = fc
  .tuple(
    part("2026", "0000", "1900", "2000", "2024", "20x6", "202"),
    part("-", "/", ""),
    part("01", "02", "12", "13", "00", "1"),
    part("-"),
    part("01", "28", "29", "30", "31", "32", "00"),
    part("T", "t", " ", "Ｔ"),
    part("00", "23", "24", "9"),
    part(":"),
    part("00", "59", "60"),
    part(":"),
    part("00", "59", "60", "61"),
    part("", ".5", ".123456789", ".", ".x"),
    part("Z", "z", "+01:00", "-23:59", "+24:00", "+01:60", "+0100", "", "Z ", "ｚ"),
  )
  .map((parts) => parts.join(""));

describe("date-time", () => {
  it("gives ajv-formats' verdict on every text, shaped or not", () => {
    fc.assert(
      fc.property(fc.oneof(dateTimeLike, fc.string()), (text) => {
        assert.equal(formats["date-time"].validate(text), ajvDateTime(text), text);
      }),
      { numRuns: 20_000 },
    );
  });

  it("is certain from bytes only of what ajv-formats accepts", () => {
    fc.assert(
      fc.property(dateTimeLike, fc.nat(3), (text, offset) => {
        const bytes = new Uint8Array(offset + text.length + 2);
        const ascii = [...text].every((char) => char.charCodeAt(0) <= 0x7f);
        fc.pre(ascii);
        for (let i = 0; i < text.length; i++) bytes[offset + i] = text.charCodeAt(i);
        if (certainDateTime(bytes, offset, offset + text.length)) assert.ok(ajvDateTime(text), text);
      }),
      { numRuns: 20_000 },
    );
  });

  it("is certain of the shapes a million orders carry", () => {
    const bytes = new TextEncoder().encode('"2026-11-02T10:00:00Z","2026-02-28T23:59:59.5+01:00"');
    assert.ok(certainDateTime(bytes, 1, 21));
    assert.ok(certainDateTime(bytes, 24, 51));
  });
});

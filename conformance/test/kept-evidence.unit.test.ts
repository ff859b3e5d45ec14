import assert from "node:assert/strict";
import { it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { recordResponse } from "../judging/exchange.ts";

// A report keeps up to a hundred failures of each check with their evidence: the evidence must be an excerpt
// that holds nothing else. A slice of a string keeps the whole string alive, so an excerpt sliced from a
// large list's start held that mebibyte for as long as the report lived, outside any account, and the
// proxy's collector ran again and again over it while lists streamed.

setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;

it("keeps an excerpt of a large body that holds none of the rest of it", () => {
  const kept: unknown[] = [];
  collect();
  const before = process.memoryUsage().heapUsed;
  for (let index = 0; index < 32; index++) {
    const body = `[${`{"id":${index},"petId":1}`.repeat(40_000)}]`;
    kept.push(recordResponse({ status: 200, headers: {}, body }));
  }
  collect();
  const grown = process.memoryUsage().heapUsed - before;
  assert.ok(grown < 4 * 1024 * 1024, `32 excerpts hold ${(grown / 1024 / 1024).toFixed(1)} MiB`);
  assert.equal(kept.length, 32);
});

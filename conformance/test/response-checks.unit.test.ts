import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mediaTypesNamed } from "../judging/response-checks.ts";

describe("mediaTypesNamed", () => {
  it("reads one media type, its parameters included", () => {
    assert.deepEqual(mediaTypesNamed("application/json; charset=utf-8"), ["application/json; charset=utf-8"]);
    assert.deepEqual(mediaTypesNamed(""), []);
  });

  it("reads the lines of a repeated Content-Type, combined with commas, each distinct one once", () => {
    assert.deepEqual(mediaTypesNamed("application/json, text/html"), ["application/json", "text/html"]);
    assert.deepEqual(mediaTypesNamed("application/json,APPLICATION/JSON , application/json"), [
      "application/json",
    ]);
  });

  it("takes no comma inside a quoted parameter value for a separator", () => {
    assert.deepEqual(mediaTypesNamed('application/json; profile="a,b", text/plain'), [
      'application/json; profile="a,b"',
      "text/plain",
    ]);
    assert.deepEqual(mediaTypesNamed('application/json; x="a\\",b"'), ['application/json; x="a\\",b"']);
  });
});

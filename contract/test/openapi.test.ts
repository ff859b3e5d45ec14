import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { loadContract, OPENAPI_PATH } from "../openapi.ts";

const GENERATED = fileURLToPath(new URL("../openapi.generated.ts", import.meta.url));
const GENERATOR = fileURLToPath(new URL("../../node_modules/openapi-typescript/bin/cli.js", import.meta.url));

describe("openapi.yaml", () => {
  const contract = loadContract();

  it("describes both operations with every documented response", () => {
    const { paths } = contract.document;
    assert.deepEqual(Object.keys(paths["/store/orders"]?.get?.responses ?? {}), ["200", "401"]);
    assert.deepEqual(Object.keys(paths["/store/orders/{orderId}"]?.delete?.responses ?? {}), [
      "204",
      "401",
      "404",
      "409",
    ]);
    assert.equal(contract.document.info.version, "1.0.0");
  });

  it("keeps the status out of the Order record and requires every Error field", () => {
    const { Order, Error: ErrorSchema } = contract.document.components.schemas;
    assert.deepEqual(Object.keys(Order?.properties ?? {}), [
      "id",
      "petId",
      "quantity",
      "shipDate",
      "complete",
    ]);
    assert.equal(Order?.required, undefined);
    assert.deepEqual(ErrorSchema?.required, ["code", "message", "status"]);
  });

  it("validates Error records strictly", () => {
    const validate = contract.schema("Error");
    assert.ok(validate({ code: "order_not_found", message: "m", status: 404 }));
    assert.ok(!validate({ code: "order_not_found", message: "m" }));
    assert.ok(!validate({ code: 1, message: "m", status: 404 }));
  });

  it("has generated TypeScript types that match it", async () => {
    const out = join(mkdtempSync(join(tmpdir(), "openapi-types-")), "openapi.generated.ts");
    await promisify(execFile)(process.execPath, [GENERATOR, OPENAPI_PATH, "-o", out]);
    assert.equal(
      readFileSync(GENERATED, "utf8"),
      readFileSync(out, "utf8"),
      "contract/openapi.generated.ts is stale: run npm run generate:types",
    );
  });
});

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { tempFolder } from "../../common/temp-folder.ts";
import { builtInContract, builtInControlContract } from "../built-in.ts";
import { CONTROL_OPENAPI_PATH, loadContract, loadControlContract, OPENAPI_PATH } from "../openapi.ts";

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

  it("has generated TypeScript types that match it", () =>
    assertTypesFresh(OPENAPI_PATH, "openapi.generated.ts"));
});

describe("control.openapi.yaml", () => {
  const control = loadControlContract();

  it("keeps the control API out of the product's contract", () => {
    assert.ok(Object.keys(loadContract().document.paths).every((path) => path.startsWith("/store/")));
    assert.deepEqual(Object.keys(control.document.paths).sort(), [
      "/",
      "/behaviour",
      "/orders",
      "/orders/{id}",
      "/requests",
      "/reset",
      "/sessions",
    ]);
  });

  it("refers to openapi.yaml for the Order fields, so they cannot drift", () => {
    const validate = control.schema("ControlOrderInput");
    assert.ok(validate({ id: 1, shipDate: "2026-11-02T10:00:00Z", status: "shipped" }));
    assert.ok(!validate({ shipDate: "tomorrow" }));
    assert.ok(!validate({ status: "lost" }));
    assert.ok(!validate({ colour: "red" }));
  });

  it("has generated TypeScript types that match it", () =>
    assertTypesFresh(CONTROL_OPENAPI_PATH, "control.generated.ts"));
});

async function assertTypesFresh(document: string, generatedName: string): Promise<void> {
  const out = join(tempFolder("openapi-types-"), generatedName);
  await promisify(execFile)(process.execPath, [GENERATOR, document, "-o", out]);
  assert.equal(
    readFileSync(fileURLToPath(new URL(`../${generatedName}`, import.meta.url)), "utf8"),
    readFileSync(out, "utf8"),
    `contract/${generatedName} is stale: run npm run generate:types`,
  );
}

describe("what the shipped contracts are built from", () => {
  it("contract/documents.generated.ts holds both documents and the bundled fixtures as the files say them", async () => {
    const { documentsModule, DOCUMENTS_MODULE } = await import("../../scripts/generate-documents.ts");
    assert.equal(
      readFileSync(DOCUMENTS_MODULE, "utf8"),
      documentsModule(),
      "contract/documents.generated.ts is stale: run npm run generate:types",
    );
  });

  it("contract/validators.generated.ts is ajv's code for the documents as they are now", async () => {
    const { validatorsModule, VALIDATORS_MODULE } = await import("../../scripts/generate-documents.ts");
    assert.equal(
      readFileSync(VALIDATORS_MODULE, "utf8"),
      validatorsModule(),
      "contract/validators.generated.ts is stale: run npm run generate:types",
    );
  });

  it("the built-in contracts judge as contracts compiled from the YAML files now do", () => {
    const cases: Array<[schema: string, value: unknown]> = [
      ["Order", { id: 1, petId: 2, quantity: 3, shipDate: "2026-11-02T10:00:00Z", complete: true }],
      ["Order", { id: 2 ** 64 }],
      ["Order", { shipDate: "tomorrow" }],
      ["Order", { id: "1" }],
      ["Error", { code: "c", message: "m", status: 404 }],
      ["Error", { code: "c", message: "m" }],
    ];
    for (const [schema, value] of cases) {
      const compiled = loadContract().schema(schema);
      const builtIn = builtInContract().schema(schema);
      assert.equal(builtIn(value), compiled(value), `${schema} ${JSON.stringify(value)}`);
      assert.deepEqual(builtIn.errors ?? null, compiled.errors ?? null);
    }
    const input = { id: 1, shipDate: "2026-11-02T10:00:00Z", status: "lost", colour: "red" };
    const compiledInput = loadControlContract().schema("ControlOrderInput");
    const builtInInput = builtInControlContract().schema("ControlOrderInput");
    assert.equal(builtInInput(input), compiledInput(input));
    assert.deepEqual(builtInInput.errors, compiledInput.errors);
  });
});

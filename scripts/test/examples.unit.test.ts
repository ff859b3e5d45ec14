import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import {
  documentedExamples,
  documentedRecipes,
  unmarkedShellBlocks,
  unnamedCodeBlocks,
} from "../examples.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

describe("the documentation's examples", () => {
  it("name the file each is run as, so the package test runs every one", () => {
    assert.deepEqual(unnamedCodeBlocks(ROOT), []);
  });

  it("mark every shell and CI block as a recipe the package test runs, or say why it is not run", () => {
    assert.deepEqual(unmarkedShellBlocks(ROOT), []);
    const modes = new Set(documentedRecipes(ROOT).map(({ mode }) => mode));
    for (const mode of ["run", "with-mock", "serves", "github-actions", "gitlab-ci"])
      assert.ok(modes.has(mode as never), mode);
  });

  it("name each file once", () => {
    const files = documentedExamples(ROOT).map(({ file }) => file);
    assert.deepEqual(
      files.filter((file, index) => files.indexOf(file) !== index),
      [],
    );
    assert.ok(files.includes("jest/shipped.test.js") && files.includes("vitest/shipped.test.ts"));
  });
});

import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { tempFolder } from "../../common/temp-folder.ts";
import { HookError, loadHooks } from "../target/hooks.ts";

describe("loadHooks", () => {
  it("a name near the shipped hooks' is asked about: did you mean mock-control?", async () => {
    for (const name of ["mock-controll", "mock-contrl", "mock"])
      await assert.rejects(loadHooks(name, "--hooks"), {
        name: "HookError",
        message: `--hooks ${name} names no hooks: did you mean mock-control?`,
      });
    await assert.rejects(loadHooks("hooks", "--hooks"), {
      message: "--hooks takes a .js, .mjs or .ts module (got hooks)",
    });
  });

  it("a hooks file that is not there is said so, naming it and not the module that would import it", async () => {
    const absent = join(tempFolder("hooks-"), "absent-hooks.mjs");
    await assert.rejects(loadHooks(absent, "--hooks"), (error: unknown) => {
      assert.ok(error instanceof HookError);
      assert.equal(error.message, `cannot load the hooks file ${absent}: not found`);
      return true;
    });
  });
});

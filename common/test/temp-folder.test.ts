import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const MODULE = fileURLToPath(new URL("../temp-folder.ts", import.meta.url));

describe("temporary folders", () => {
  it("are removed with their contents when the process exits", () => {
    const script = `
      import { writeFileSync, mkdirSync } from "node:fs";
      import { tempFolder } from ${JSON.stringify(MODULE)};
      const a = tempFolder("petstore-temp-test-");
      const b = tempFolder("petstore-temp-test-");
      mkdirSync(a + "/nested");
      writeFileSync(a + "/nested/file.json", "[]");
      console.log(JSON.stringify([a, b]));
      process.exitCode = 0;
    `;
    const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    const folders = JSON.parse(out) as string[];
    assert.equal(folders.length, 2);
    for (const folder of folders) assert.equal(existsSync(folder), false, folder);
  });
});

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { describe, it } from "node:test";
import { pathWithPackageCommands } from "../package-commands.ts";
import { tempFolder } from "../temp-folder.ts";

describe("the package's commands on a wrapped COMMAND's PATH", () => {
  it("a folder left by a wrapper killed with SIGKILL is removed by the next one; a live one's is kept", () => {
    // A process that has ended: its pid names a folder no process will remove.
    const gone = spawnSync(process.execPath, ["-e", ""]).pid;
    const temporary = dirname(tempFolder("petstore-where-"));
    const stale = join(temporary, `petstore-commands-${gone}-left`);
    const live = join(temporary, `petstore-commands-${process.pid}-live`);
    for (const folder of [stale, live]) {
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, "petstore-mock"), "#!/bin/sh\n");
    }
    try {
      const path = pathWithPackageCommands("/usr/bin") ?? "";
      const made = path.split(delimiter)[0] ?? "";
      assert.match(made, new RegExp(`petstore-commands-${process.pid}-`));
      assert.ok(existsSync(join(made, "petstore-conformance")));
      assert.equal(existsSync(stale), false);
      assert.equal(existsSync(live), true);
    } finally {
      rmSync(stale, { recursive: true, force: true });
      rmSync(live, { recursive: true, force: true });
    }
  });
});

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { tempFolder } from "../../common/temp-folder.ts";
import { reportFiles, unwritableReportFile } from "../reports/report-files.ts";

describe("report files checked before a run", () => {
  it("a report in folders that do not exist yet: they are made, and nothing is left in them", () => {
    const folder = join(tempFolder("report-files-"), "reports", "ci");
    const file = join(folder, "conformance.xml");
    assert.equal(unwritableReportFile([file]), undefined);
    assert.ok(statSync(folder).isDirectory());
    assert.deepEqual(readdirSync(folder), []);
  });

  it("a file already there is left as it is until the run writes it", () => {
    const file = join(tempFolder("report-files-"), "report.json");
    writeFileSync(file, "before");
    assert.equal(unwritableReportFile([file]), undefined);
    assert.equal(readFileSync(file, "utf8"), "before");
  });

  it("a folder that cannot be made, or a directory given as the file: the first such file, and why", () => {
    const root = tempFolder("report-files-");
    const plain = join(root, "plain");
    writeFileSync(plain, "");
    const good = join(root, "fine.json");
    const underFile = join(plain, "r.xml");
    assert.deepEqual(unwritableReportFile([good, underFile, root]), {
      file: underFile,
      message: `cannot write ${underFile}: its folder ${plain} cannot be made: a file is in the way (EEXIST)`,
    });
    const deeper = join(plain, "more", "r.xml");
    assert.match(unwritableReportFile([deeper])?.message ?? "", /: a file is in the way \(ENOTDIR\)$/);
    const directory = join(root, "dir");
    mkdirSync(directory);
    assert.deepEqual(unwritableReportFile([directory]), {
      file: directory,
      message: `cannot write ${directory}: ${directory} is a directory: give the path of a file to write`,
    });
  });

  it("a named pipe is refused; a descriptor or a device is written through, so nothing is tried there", () => {
    const pipe = join(tempFolder("report-files-"), "pipe");
    execFileSync("mkfifo", [pipe]);
    assert.match(unwritableReportFile([pipe])?.message ?? "", /is a named pipe: give the path of a file/);
    assert.equal(unwritableReportFile(["/dev/stdout", "/dev/fd/2", "/dev/null"]), undefined);
    // A file only ever written whole (the HAR) cannot go to either.
    for (const file of ["/dev/stdout", "/dev/null"])
      assert.match(
        unwritableReportFile([file], "whole")?.message ?? "",
        /it is a device or a descriptor, and this file is written whole beside its name/,
      );
    assert.ok(statSync("/dev/null").isCharacterDevice());
  });

  it("the files of the reports asked for, those to standard output left out", () => {
    assert.deepEqual(reportFiles([{ file: "a.xml" }, {}, { file: "b.json" }]), ["a.xml", "b.json"]);
  });
});

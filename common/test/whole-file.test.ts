import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { closeSync, lstatSync, openSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { tempFolder } from "../temp-folder.ts";
import { WholeFile, writeWholeFile } from "../whole-file.ts";

const folder = () => tempFolder("petstore-whole-");

// Names that are no regular file (made with mknod and mkfifo, hence not in the unit loop).
describe("whole files at names that are no regular file", () => {
  // A copy of /dev/null's device in a folder of the test's own: a regression replaces the copy, never the
  // machine's. Making one needs root (as CI runs); elsewhere that part is reported skipped.
  const deviceCopy = (directory: string): string | undefined => {
    const path = join(directory, "null");
    try {
      execFileSync("mknod", ["-m", "666", path, "c", "1", "3"], { stdio: "ignore" });
      return path;
    } catch {
      return undefined;
    }
  };

  test("a character device named as such is written through; a link to one is replaced, as any link", (t) => {
    const directory = folder();
    const device = deviceCopy(directory);
    if (device === undefined) {
      t.skip("mknod needs root here");
      return;
    }
    writeWholeFile(device, "{}");
    assert.ok(statSync(device).isCharacterDevice());
    symlinkSync(device, join(directory, "null-link"));
    writeWholeFile(join(directory, "null-link"), "{}");
    assert.ok(lstatSync(join(directory, "null-link")).isFile());
    assert.ok(statSync(device).isCharacterDevice());
    assert.throws(() => new WholeFile(device), /is a device or a descriptor/);
  });

  test("a descriptor of this process is written at its offset; a link into /proc elsewhere is replaced", () => {
    const directory = folder();
    const log = join(directory, "out.log");
    writeFileSync(log, "before\n");
    const fd = openSync(log, "a");
    try {
      writeWholeFile(`/dev/fd/${fd}`, "first\n");
      symlinkSync(`/proc/self/fd/${fd}`, join(directory, "fd-link"));
      writeWholeFile(join(directory, "fd-link"), "second\n");
    } finally {
      closeSync(fd);
    }
    assert.equal(readFileSync(log, "utf8"), "before\nfirst\nsecond\n");
    assert.ok(lstatSync(join(directory, "fd-link")).isSymbolicLink());
    // Any file is reached through /proc/self/root: a link left there is replaced, its target untouched.
    const victim = join(directory, "victim.txt");
    writeFileSync(victim, "untouched");
    symlinkSync(`/proc/self/root${victim}`, join(directory, "root-link"));
    writeWholeFile(join(directory, "root-link"), "report");
    assert.equal(readFileSync(victim, "utf8"), "untouched");
    assert.equal(readFileSync(join(directory, "root-link"), "utf8"), "report");
  });

  test("a report to /dev/stdout redirected to a file keeps its place among the process's own output", () => {
    const out = join(folder(), "out.txt");
    const module = new URL("../whole-file.ts", import.meta.url).href;
    const script = `import { writeWholeFile } from ${JSON.stringify(module)}; process.stdout.write("pretty\\n"); writeWholeFile("/dev/stdout", "{\\"report\\":true}\\n"); process.stdout.write("after\\n");`;
    const fd = openSync(out, "w");
    try {
      execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        stdio: ["ignore", fd, "inherit"],
      });
    } finally {
      closeSync(fd);
    }
    assert.equal(readFileSync(out, "utf8"), 'pretty\n{"report":true}\nafter\n');
  });

  test("a pipe or a directory is refused", () => {
    const directory = folder();
    execFileSync("mkfifo", [join(directory, "pipe")]);
    assert.throws(
      () => writeWholeFile(join(directory, "pipe"), "{}"),
      /is a named pipe: give the path of a file/,
    );
    assert.throws(() => writeWholeFile(directory, "{}"), /is a directory: give the path of a file/);
  });
});

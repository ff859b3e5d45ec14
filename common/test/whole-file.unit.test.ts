import assert from "node:assert/strict";
import {
  chmodSync,
  type FSWatcher,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  watch,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { tempFolder } from "../temp-folder.ts";
import { WholeFile, writeWholeFile } from "../whole-file.ts";

const folder = () => tempFolder("petstore-whole-");

describe("whole files", () => {
  test("the target's name appears only by a rename, holding the whole text; no temporary file is left", async () => {
    const directory = folder();
    const events: Array<[string, string | null]> = [];
    const watcher: FSWatcher = watch(directory, (event, name) => events.push([event, name]));
    const text = "x".repeat(3 * 1024 * 1024);
    writeWholeFile(join(directory, "report.json"), text);
    await new Promise((resolve) => setTimeout(resolve, 100));
    watcher.close();
    assert.equal(readFileSync(join(directory, "report.json"), "utf8"), text);
    assert.deepEqual(readdirSync(directory), ["report.json"]);
    const onTarget = events.filter(([, name]) => name === "report.json").map(([event]) => event);
    assert.ok(onTarget.length > 0);
    assert.deepEqual([...new Set(onTarget)], ["rename"], `events on the target: ${onTarget.join(", ")}`);
  });

  test("a link at the target's name is replaced, never written through", () => {
    const directory = folder();
    const elsewhere = join(folder(), "precious.txt");
    writeFileSync(elsewhere, "keep me");
    symlinkSync(elsewhere, join(directory, "state.json"));
    writeWholeFile(join(directory, "state.json"), "{}");
    assert.equal(readFileSync(elsewhere, "utf8"), "keep me");
    assert.equal(readFileSync(join(directory, "state.json"), "utf8"), "{}");
  });

  test("a file given up leaves the target as it was", () => {
    const directory = folder();
    const target = join(directory, "run.har");
    writeFileSync(target, "the last run's");
    const file = new WholeFile(target);
    file.write("half of a");
    file.abandon();
    assert.equal(readFileSync(target, "utf8"), "the last run's");
    assert.deepEqual(readdirSync(directory), ["run.har"]);
  });

  test("a target in a folder that does not exist is an error, with nothing written", () => {
    assert.throws(() => writeWholeFile(join(folder(), "missing", "report.xml"), "<x/>"), { code: "ENOENT" });
  });

  test("a file already there keeps its permissions; a new one gets the mode asked for, whatever the umask", () => {
    const directory = folder();
    const keys = join(directory, "keys.json");
    writeFileSync(keys, "{}");
    chmodSync(keys, 0o600);
    writeWholeFile(keys, '{"apiKeys":["secret"]}');
    assert.equal(
      statSync(keys).mode & 0o777,
      0o600,
      "a rewrite must not make a file of keys readable by all",
    );
    const fresh = join(directory, "fresh.json");
    writeWholeFile(fresh, "{}", 0o600);
    assert.equal(statSync(fresh).mode & 0o777, 0o600);
    const shared = join(directory, "shared.json");
    writeWholeFile(shared, "{}");
    assert.equal(statSync(shared).mode & 0o777, 0o644);
  });
});

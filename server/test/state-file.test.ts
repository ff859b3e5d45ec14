import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { tempFolder } from "../../common/temp-folder.ts";
import { parseExact } from "../../contract/exact-json.ts";
import { runMainToExit, startMockProcess } from "../../test-support/spawn-mock.ts";
import { AUTH, writeFixture } from "./support.ts";
import { sendToProcess as send } from "./transports.ts";

const stateFile = () => join(tempFolder("petstore-state-"), "state.json");

/** Waits until the file holds what `check` looks for: it is written shortly after changes settle. */
async function written(file: string, check: RegExp): Promise<string> {
  for (const begun = Date.now(); Date.now() - begun < 5_000; await sleep(50)) {
    try {
      const text = readFileSync(file, "utf8");
      if (check.test(text)) return text;
    } catch {}
  }
  assert.fail(`${file} never held ${check}`);
}

describe("--state FILE (real processes)", () => {
  it("orders, sessions, rules and journals come back after a restart, ids digit for digit", async () => {
    const file = stateFile();
    const session = { "x-mock-session": "team-a" };
    let mock = await startMockProcess(["--quiet", "--state", file, "--state-journal"]);
    try {
      assert.match(mock.output(), /state: file .*state\.json \(a new file, with journals\)/);
      assert.equal((await send(mock, "DELETE", "/v1/store/orders/9007199254740993", AUTH)).status, 204);
      await send(
        mock,
        "PUT",
        "/__control/orders/9223372036854775806",
        session,
        '{"petId":9007199254740993,"status":"pending"}',
      );
      await send(mock, "DELETE", "/__control/orders/1", session);
      await send(
        mock,
        "PUT",
        "/__control/behaviour",
        session,
        '{"delayMs":5,"rules":[{"operation":"cancelOrder","status":503,"times":2}]}',
      );
    } finally {
      assert.equal(await mock.stop("SIGTERM"), 0);
    }
    mock = await startMockProcess(["--quiet", "--state", file, "--state-journal"]);
    try {
      assert.match(mock.output(), /\(restored, 1 session, with journals\)/);
      assert.equal((await send(mock, "DELETE", "/v1/store/orders/9007199254740993", AUTH)).status, 409);
      const listed = (await send(mock, "GET", "/v1/store/orders", { ...AUTH, ...session })).text;
      assert.match(listed, /\{"id":9223372036854775806,"petId":9007199254740993\}\]$/);
      assert.doesNotMatch(listed, /"id":1,/);
      assert.deepEqual(JSON.parse((await send(mock, "GET", "/__control/behaviour", session)).text), {
        delayMs: 5,
        rules: [{ operation: "cancelOrder", status: 503, times: 2 }],
      });
      const journal = JSON.parse((await send(mock, "GET", "/__control/requests")).text);
      assert.deepEqual(
        journal.map((entry: { status: number }) => entry.status),
        [204, 409],
        "the journal from before the restart, then this run's",
      );
    } finally {
      await mock.stop();
    }
  });

  it("after the fixtures changed, the saved changes win and every order the state never touched comes from the new fixtures", async () => {
    const file = stateFile();
    const order = (id: number, petId: number, status: string) => ({ id, petId, status });
    const before = writeFixture({
      apiKeys: ["k-1"],
      orders: [order(1, 1, "pending"), order(2, 2, "pending"), order(3, 3, "shipped")],
    });
    const key = { authorization: "Bearer k-1" };
    let mock = await startMockProcess(["--quiet", "--state", file, "--fixtures", before]);
    try {
      assert.equal((await send(mock, "DELETE", "/v1/store/orders/1", key)).status, 204);
      await send(mock, "PUT", "/__control/orders/2", {}, '{"petId":99,"status":"pending"}');
      await send(mock, "DELETE", "/__control/orders/3");
      await send(mock, "PUT", "/__control/orders/50", {}, '{"petId":50,"status":"shipped"}');
    } finally {
      await mock.stop();
    }
    const after = writeFixture({
      apiKeys: ["k-1"],
      orders: [order(1, 5, "pending"), order(3, 3, "pending"), order(4, 4, "pending")],
    });
    mock = await startMockProcess(["--quiet", "--state", file, "--fixtures", after]);
    try {
      assert.equal(
        (await send(mock, "GET", "/v1/store/orders", key)).text,
        '[{"id":1,"petId":1},{"id":4,"petId":4},{"id":2,"petId":99},{"id":50,"petId":50}]',
        "1 as saved, 3 still removed, 4 from the new fixtures, 2 (gone from them) and 50 appended",
      );
      assert.equal((await send(mock, "DELETE", "/v1/store/orders/1", key)).status, 409);
      assert.equal((await send(mock, "DELETE", "/v1/store/orders/4", key)).status, 204);
    } finally {
      await mock.stop();
    }
  });

  it("a process killed (SIGKILL) at any moment leaves a whole file that starts the next one", async () => {
    const file = stateFile();
    for (let round = 0; round < 3; round++) {
      const mock = await startMockProcess(["--quiet", "--state", file]);
      let stop = false;
      let sent = 0;
      // Changes without pause, so that writes are under way when the kill comes.
      const changing = (async () => {
        while (!stop) {
          const id = 1_000_000 + round * 100_000 + sent++;
          await send(mock, "PUT", `/__control/orders/${id}`, {}, '{"petId":1,"status":"pending"}').catch(
            () => {},
          );
        }
      })();
      await written(file, new RegExp(`"id":${1_000_000 + round * 100_000}[,}]`));
      await sleep(50 + round * 70);
      await mock.stop("SIGKILL");
      stop = true;
      await changing;
      const document = parseExact(readFileSync(file, "utf8")) as { worlds: unknown[] };
      assert.equal(document.worlds.length, 1, `round ${round}: the file is whole`);
    }
    const last = await startMockProcess(["--quiet", "--state", file]);
    try {
      assert.match(last.output(), /\(restored, 0 sessions\)/);
      assert.match((await send(last, "GET", "/v1/store/orders", AUTH)).text, /"id":1000000,/);
    } finally {
      await last.stop();
    }
  });

  for (const [name, content, problem] of [
    ["a corrupt file", '{"petstoreMockState":1,"worlds":[{"sess', /not valid JSON .*the file is corrupt/],
    ["a file that is not this mock's state", '{"apiKeys":[],"orders":[]}', /not a petstore-mock state file/],
    [
      "a state with an order that is not valid",
      '{"petstoreMockState":1,"worlds":[{"session":null,"lastUsed":"2026-11-24T00:00:00Z","removed":[],"orders":[{"id":"x","status":"pending"}],"behaviour":{}}]}',
      /worlds\[0\], orders\[0\] \(id "x"\), field "id"/,
    ],
  ] as const) {
    it(`${name} stops start-up naming the file and the problem, and is never overwritten`, async () => {
      const file = stateFile();
      writeFileSync(file, content);
      const exited = await runMainToExit(["--state", file]);
      assert.equal(exited.code, 1);
      assert.match(exited.stderr, new RegExp(`^error: ${file.replace(/[.]/g, "\\.")}: `));
      assert.match(exited.stderr, problem);
      assert.equal(readFileSync(file, "utf8"), content);
    });
  }

  it("a state file that is not a regular file (a device, a pipe) is refused at start, never read", async () => {
    const fifo = join(tempFolder("petstore-fifo-"), "state.fifo");
    execFileSync("mkfifo", [fifo]);
    for (const file of ["/dev/zero", fifo]) {
      const exited = await runMainToExit(["--port", "0", "--state", file]);
      assert.equal(exited.code, 1, file);
      assert.match(exited.stderr, /not a regular file; the state file must be one/);
    }
  });

  it("a state file in a folder that does not exist is refused at start, before serving (exit 1)", async () => {
    const file = join(tempFolder("petstore-state-"), "nope", "state.json");
    // Wrapping a command that ends at once: a mock that served anyway would end too, with its code.
    const exited = await runMainToExit(["--port", "0", "--state", file, "--", process.execPath, "-e", ""]);
    assert.equal(exited.code, 1);
    assert.doesNotMatch(exited.stdout + exited.stderr, /listening/, "it never served");
    assert.equal(
      exited.stderr,
      `error: ${file}: cannot write the state file: its folder ${dirname(file)} does not exist (create it first)\n`,
    );
  });

  it("a state that cannot be written at stop ends the process with exit code 1, saying what is lost", async () => {
    const folder = join(tempFolder("petstore-state-"), "kept");
    mkdirSync(folder);
    const file = join(folder, "state.json");
    const mock = await startMockProcess(["--quiet", "--state", file]);
    rmSync(folder, { recursive: true });
    assert.equal((await send(mock, "DELETE", "/v1/store/orders/2", AUTH)).status, 204);
    assert.equal(await mock.stop("SIGTERM"), 1);
    assert.match(
      mock.output(),
      /error: cannot write the state file .*state\.json at stop: ENOENT; the changes since its last write are lost/,
    );
  });

  it("--state with --store, or --state-journal alone, is a usage error (exit 2)", async () => {
    assert.equal((await runMainToExit(["--state", stateFile(), "--store", "redis://127.0.0.1:1"])).code, 2);
    assert.equal((await runMainToExit(["--state-journal"])).code, 2);
    assert.equal((await runMainToExit(["--store", "http://127.0.0.1:6379"])).code, 2);
  });
});

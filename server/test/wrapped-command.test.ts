import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { tempFolder } from "../../common/temp-folder.ts";
import { capturedOutput, startMockProcess } from "../../test-support/spawn-mock.ts";
import { DEV_KEY } from "./support.ts";

const MAIN = fileURLToPath(new URL("../main.ts", import.meta.url));
const folder = tempFolder("petstore-wrapped-");

interface Wrapped {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `petstore-mock --port 0 [options] -- node -e SCRIPT` as a process; `whenStdout` sees the output so far and
 * may signal the wrapper (the process a CI runner or a terminal would signal).
 */
function wrap(
  options: string[],
  script: string,
  whenStdout?: (stdout: string, wrapper: { kill(signal: NodeJS.Signals): void }) => void,
): Promise<Wrapped> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", MAIN, "--port", "0", ...options, "--", process.execPath, "-e", script],
    {
      env: { ...process.env, PORT: "", HOST: "", PETSTORE_FIXTURES: "", PETSTORE_API_KEYS: "" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const output = capturedOutput(child);
  if (whenStdout) child.stdout.on("data", () => whenStdout(output.stdout(), child));
  return once(child, "exit").then(([code]) => ({
    code: code as number | null,
    stdout: output.stdout(),
    stderr: output.stderr(),
  }));
}

/** A COMMAND's script: cancels order 2 through PETSTORE_MOCK_URL and prints the URL and the status. */
const CANCEL_ORDER_2 = `
const url = process.env.PETSTORE_MOCK_URL;
fetch(url + "/store/orders/2", { method: "DELETE", headers: { authorization: "Bearer ${DEV_KEY}" } })
  .then((response) => { console.log(url, response.status); process.exitCode = Number(process.argv[1] ?? 0); });
`;

describe("petstore-mock -- COMMAND", { concurrency: true }, () => {
  it("runs COMMAND once the mock serves, with PETSTORE_MOCK_URL; stdout is COMMAND's alone; exit 0 as it did", async () => {
    const { code, stdout, stderr } = await wrap([], CANCEL_ORDER_2);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^http:\/\/127\.0\.0\.1:\d+\/v1 204\n$/);
    // The mock's own lines go to stderr, the request log included, so COMMAND's output can be piped whole.
    assert.match(stderr, /Petstore Store Orders mock listening on http:\/\/127\.0\.0\.1:\d+\/v1/);
    assert.match(stderr, /"msg":"request"/);
  });

  it("a wildcard bind gives COMMAND a loopback address", async () => {
    const { code, stdout } = await wrap(["--host", "0.0.0.0", "--quiet"], CANCEL_ORDER_2);
    assert.equal(code, 0);
    assert.match(stdout, /^http:\/\/127\.0\.0\.1:\d+\/v1 204\n$/);
  });

  it("exits with COMMAND's failing code, after the state is written", async () => {
    const state = join(folder, "failing.json");
    const { code, stdout } = await wrap(["--state", state], `${CANCEL_ORDER_2.replace("?? 0", "?? 3")}`);
    assert.equal(code, 3);
    assert.match(stdout, / 204\n$/);
    const saved = JSON.parse(readFileSync(state, "utf8")) as { worlds: Array<{ orders: unknown[] }> };
    assert.match(JSON.stringify(saved.worlds), /"id":2,[^}]*"status":"cancelled"/);
  });

  it("128 + the signal's number when a signal ended COMMAND", async () => {
    const { code } = await wrap(["--quiet"], `process.kill(process.pid, "SIGKILL")`);
    assert.equal(code, 137);
  });

  it("SIGTERM to the wrapper goes on to COMMAND; duplicates too; the exit code is COMMAND's", async () => {
    const script = `
      let seen = 0;
      process.on("SIGTERM", () => { seen++; console.log("SIGTERM " + seen); if (seen === 2) setTimeout(() => process.exit(5), 50); });
      console.log("ready");
      setInterval(() => {}, 1000);`;
    let sent = false;
    const state = join(folder, "signalled.json");
    const { code, stdout, stderr } = await wrap(["--state", state], script, (out, wrapper) => {
      if (sent || !out.includes("ready")) return;
      sent = true;
      wrapper.kill("SIGTERM");
      setTimeout(() => wrapper.kill("SIGTERM"), 100);
    });
    assert.equal(code, 5, stderr);
    assert.equal(stdout, "ready\nSIGTERM 1\nSIGTERM 2\n");
  });

  it("a COMMAND that dies of the relayed SIGINT: 130, and nothing left listening", async () => {
    let url = "";
    const { code } = await wrap(
      ["--quiet"],
      `console.log(process.env.PETSTORE_MOCK_URL); setInterval(() => {}, 1000);`,
      (out, wrapper) => {
        if (url || !out.includes("\n")) return;
        url = out.trim();
        wrapper.kill("SIGINT");
      },
    );
    assert.equal(code, 130);
    await assert.rejects(fetch(`${url}/store/orders`), /fetch failed/);
  });

  it("a COMMAND that ignores the stop is killed after the grace period, saying so", async () => {
    let sent = false;
    const { code, stderr } = await wrap(
      ["--quiet"],
      `process.on("SIGTERM", () => {}); console.log("ready"); setInterval(() => {}, 1000);`,
      (out, wrapper) => {
        if (sent || !out.includes("ready")) return;
        sent = true;
        wrapper.kill("SIGTERM");
      },
    );
    assert.equal(code, 137);
    assert.match(stderr, /petstore-mock: \S+ did not exit within 10 s of SIGTERM; killing it\n/);
  });

  it("a COMMAND that cannot start: 127 and one line; the mock still stops", async () => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", MAIN, "--port", "0", "--quiet", "--", "no-such-command-anywhere"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    const output = capturedOutput(child);
    const [code] = await once(child, "exit");
    assert.equal(code, 127);
    assert.match(
      output.stderr(),
      /petstore-mock: cannot run "no-such-command-anywhere": not found \(ENOENT\)\n/,
    );
  });
});

/** Whether a process still runs: a zombie (ended, not yet reaped by whoever adopted it) does not. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** Waits for a process to end, for at most the bound: a guard against a hang, not a measure of speed. */
async function ended(pid: number, boundMs = 20_000): Promise<boolean> {
  for (let waited = 0; waited < boundMs; waited += 50) {
    if (!running(pid)) return true;
    await sleep(50);
  }
  return !running(pid);
}

/**
 * The mock wrapping a COMMAND that starts a child (a grandchild of the wrapper) that runs on, writes its
 * pid to the file it is given and prints "started"; by default a shell's background sleep.
 */
async function wrapperWithGrandchild(
  name: string,
  command: (pidFile: string) => string[] = (pidFile) => [
    "sh",
    "-c",
    `sleep 300 & echo $! > '${pidFile}'; echo started; wait`,
  ],
): Promise<{ wrapper: ChildProcess; grandchild: number }> {
  const pidFile = join(folder, `${name}.pid`);
  const wrapper = spawn(
    process.execPath,
    ["--import", "tsx", MAIN, "--quiet", "--port", "0", "--", ...command(pidFile)],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  wrapper.stdout?.on("data", (chunk: Buffer) => {
    output += chunk;
  });
  while (!output.includes("started")) {
    if (wrapper.exitCode !== null) assert.fail(`the wrapper ended early: ${output}`);
    await once(wrapper.stdout as NodeJS.ReadableStream, "data");
  }
  return { wrapper, grandchild: Number(readFileSync(pidFile, "utf8")) };
}

describe("a wrapped COMMAND's process group", () => {
  it("a stop signal to the wrapper's PID alone ends COMMAND's children too", async () => {
    const { wrapper, grandchild } = await wrapperWithGrandchild("term");
    assert.ok(running(grandchild));
    wrapper.kill("SIGTERM");
    const [code] = await once(wrapper, "exit");
    assert.equal(code, 143, "sh ended by the relayed SIGTERM");
    assert.ok(await ended(grandchild), "the background sleep did not outlive the wrapper");
  });

  it("nothing of the group outlives a wrapper killed with SIGKILL", async () => {
    const { wrapper, grandchild } = await wrapperWithGrandchild("kill");
    wrapper.kill("SIGKILL");
    await once(wrapper, "exit");
    assert.ok(await ended(grandchild), "the background sleep did not outlive the killed wrapper");
  });

  // Children that leave COMMAND's group: a job of a shell with job control on, and a detached spawn (as
  // Playwright starts browsers, in a session of its own) that ignores SIGTERM.
  const leavers: Record<string, (pidFile: string) => string[]> = {
    // bash, whose job control puts each job in a group of its own without a terminal too (dash's needs one).
    "set -m": (pidFile) => ["bash", "-c", `set -m; sleep 1000 & echo $! > '${pidFile}'; echo started; wait`],
    "a detached spawn": (pidFile) => [
      process.execPath,
      "-e",
      `const child = require("node:child_process").spawn(process.execPath, ["-e", "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"], { detached: true, stdio: "ignore" });
require("node:fs").writeFileSync(${JSON.stringify(pidFile)}, String(child.pid));
console.log("started");
setInterval(() => {}, 1000);`,
    ],
  };
  for (const [how, command] of Object.entries(leavers)) {
    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      it(`a child that left the group by ${how} ends with a wrapper stopped by ${signal}`, async () => {
        const { wrapper, grandchild } = await wrapperWithGrandchild(
          `${how}-${signal}`.replace(/\W/g, "-"),
          command,
        );
        try {
          assert.ok(running(grandchild));
          const exited = once(wrapper, "exit");
          wrapper.kill(signal);
          await exited;
          assert.ok(await ended(grandchild), `the ${how} child outlived the wrapper's ${signal}`);
        } finally {
          if (running(grandchild)) process.kill(grandchild, "SIGKILL");
        }
      });
    }
  }
});

describe("the wrappers' COMMAND finds the package's commands by name", () => {
  const BIN = fileURLToPath(new URL("../../conformance/bin.ts", import.meta.url));
  // Both commands by name, on a PATH that holds neither (no npx, no node_modules/.bin).
  const BOTH = "petstore-conformance --list | head -n 1 && petstore-mock --help | head -n 1";
  const run = async (argv: string[]) => {
    const child = spawn(process.execPath, ["--import", "tsx", ...argv, "--", "sh", "-c", BOTH], {
      env: { ...process.env, PATH: "/usr/bin:/bin", PORT: "", HOST: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output = capturedOutput(child);
    const [code] = await once(child, "exit");
    return { code, stdout: output.stdout(), stderr: output.stderr() };
  };

  it("petstore-mock -- sh -c '…': both commands run by name", async () => {
    const { code, stdout, stderr } = await run([MAIN, "--port", "0", "--quiet"]);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^list-orders\nUsage: petstore-mock/);
  });

  it("petstore-conformance proxy -- sh -c '…': both commands run by name", async () => {
    const upstream = await startMockProcess(["--quiet"]);
    try {
      const { code, stdout, stderr } = await run([BIN, "proxy", "--upstream", upstream.url, "--port", "0"]);
      assert.equal(code, 0, stderr);
      assert.match(stdout, /^list-orders\nUsage: petstore-mock/);
    } finally {
      await upstream.stop();
    }
  });
});

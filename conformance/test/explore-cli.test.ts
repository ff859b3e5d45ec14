import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { tempFolder } from "../../common/temp-folder.ts";
import { type ExploreTarget, startExploreTarget } from "../../test-support/explore-target.ts";
import { freePort } from "../../test-support/free-port.ts";
import { cli, NO_PROXY_ENV } from "./run-cli.ts";

describe("petstore-conformance explore", () => {
  let target: ExploreTarget;
  let folder: string;
  before(async () => {
    target = await startExploreTarget({ defect: "number-id-cache" });
    folder = tempFolder("explore-cli-");
  });
  after(() => target.close());

  const idsFile = (name: string, ids: object | string) => {
    const path = join(folder, name);
    writeFileSync(path, typeof ids === "string" ? ids : JSON.stringify(ids));
    return path;
  };

  it("exits 2 with one line saying what to do when it has no order to cancel", async () => {
    const { code, stderr } = await cli(
      ["explore", "--base-url", target.url, "--api-key", target.key, "--budget", "1s"],
      NO_PROXY_ENV,
    );
    assert.equal(code, 2);
    const errors = stderr.split("\n").filter((line) => line.startsWith("error:"));
    assert.equal(errors.length, 1);
    assert.match(errors[0] as string, /no pending order to cancel: give some in --order-ids FILE/);
  });

  it("a report that cannot be written is refused at start, in one line, before any request", async () => {
    const plain = idsFile("plain", "");
    const junit = join(`${plain}-reports`, "explore.xml");
    const port = await freePort();
    const { code, stderr } = await cli(
      [
        "explore",
        "--base-url",
        `http://127.0.0.1:${port}/v1`,
        "--api-key",
        "k",
        "--reporter",
        `json:${join(plain, "explore.json")}`,
        "--reporter",
        `junit:${junit}`,
      ],
      NO_PROXY_ENV,
    );
    assert.equal(code, 2);
    assert.equal(
      stderr,
      `error: cannot write ${join(plain, "explore.json")}: its folder ${plain} cannot be made: a file is in the way (EEXIST); nothing was run\n`,
    );
    assert.match(
      readFileSync(junit, "utf8"),
      /cannot write .*explore\.json: its folder .* cannot be made: a file is in the way \(EEXIST\); nothing was run/,
      "the other reports say it too",
    );
  });

  it("exits 2 when the key is refused or the target cannot be reached", async () => {
    const ids = idsFile("refused.json", { pending: ["1"] });
    const refused = await cli(
      ["explore", "--base-url", target.url, "--api-key", "wrong-key", "--order-ids", ids],
      NO_PROXY_ENV,
    );
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /refused the API key/);
    assert.doesNotMatch(refused.stderr, /wrong-key/);
    const port = await freePort();
    const unreachable = await cli(
      ["explore", "--base-url", `http://127.0.0.1:${port}/v1`, "--api-key", "k", "--order-ids", ids],
      NO_PROXY_ENV,
    );
    assert.equal(unreachable.code, 2);
    assert.match(unreachable.stderr, /ECONNREFUSED/);
  });

  it("a hook that reaches nothing is said as the run says it, and every report asked for says the error", async () => {
    const port = await freePort();
    const reports = join(folder, "unreached");
    const { code, stdout, stderr } = await cli(
      ["explore", "--base-url", `http://127.0.0.1:${port}/v1`, "--api-key", "k", "--hooks", "mock-control"]
        .concat(["--reporter", `json:${reports}.json`, "--reporter", `junit:${reports}.xml`])
        .concat(["--reporter", `html:${reports}.html`, "--reporter", `script:${reports}.mjs`]),
      NO_PROXY_ENV,
    );
    assert.equal(code, 2, stderr);
    assert.match(
      stderr,
      new RegExp(
        `^error: the beforeRun hook failed: nothing accepts connections at 127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)`,
        "m",
      ),
    );
    assert.equal(stdout, "");
    const json = JSON.parse(readFileSync(`${reports}.json`, "utf8"));
    assert.equal(json.outcome.verdict, "error");
    assert.match(json.outcome.reasons[0], /ECONNREFUSED/);
    assert.equal(json.passed, false);
    const junit = readFileSync(`${reports}.xml`, "utf8");
    assert.match(
      junit,
      /errors="1"[\s\S]*name="run: the run could not explore the target"[\s\S]*ECONNREFUSED/,
    );
    assert.match(readFileSync(`${reports}.html`, "utf8"), /<h1>Petstore Store Orders explore: error<\/h1>/);
    const replay = await new Promise<{ status: number | null }>((resolve) =>
      spawn(process.execPath, [`${reports}.mjs`], { stdio: "ignore" }).on("exit", (status) =>
        resolve({ status }),
      ),
    );
    assert.equal(replay.status, 2);
  });

  it("a refused command line still writes the reports asked for, saying why (bad usage)", async () => {
    const reports = join(folder, "refused-line");
    const { code, stderr } = await cli(
      ["explore", "--base-url", "http://127.0.0.1:9/v1", "--api-key", "k", "--clients", "many"]
        .concat(["--reporter", `json:${reports}.json`, "--reporter", `junit:${reports}.xml`])
        .concat(["--reporter", `markdown:${reports}.md`, "--reporter", `html:${reports}.html`]),
      NO_PROXY_ENV,
    );
    assert.equal(code, 2, stderr);
    assert.equal(stderr.split("\n").filter((line) => line.startsWith("error:")).length, 1, stderr);
    const json = JSON.parse(readFileSync(`${reports}.json`, "utf8"));
    assert.equal(json.outcome.verdict, "error");
    assert.match(json.outcome.reasons[0], /--clients.*\(bad usage\)$/);
    assert.equal(json.target, "http://127.0.0.1:9/v1");
    assert.equal(json.passed, false);
    assert.match(readFileSync(`${reports}.xml`, "utf8"), /errors="1"[\s\S]*--clients/);
    assert.match(readFileSync(`${reports}.md`, "utf8"), /error: .*--clients/);
    assert.match(readFileSync(`${reports}.html`, "utf8"), /explore: error/);
  });

  it("refuses two reports that name one file, naming both, before any request", async () => {
    const file = join(folder, "shared-report");
    const { code, stderr } = await cli(
      ["explore", "--base-url", "http://127.0.0.1:9/v1", "--api-key", "k", "--order-ids", "none.json"].concat(
        ["--reporter", `json:${file}`, "--reporter", `junit:${folder}/./shared-report`],
      ),
      NO_PROXY_ENV,
    );
    assert.equal(code, 2, stderr);
    assert.match(
      stderr,
      /^error: --reporter json:.*shared-report and --reporter junit:.*shared-report name the same file .*: give each its own/m,
    );
  });

  it("stops at once, exit 2, when --max-body cuts the first list: every list would be cut the same", async () => {
    const correct = await startExploreTarget();
    try {
      const ids = idsFile("max-body.json", correct.create(20, 1));
      const { code, stderr } = await cli(
        [
          "explore",
          "--base-url",
          correct.url,
          "--api-key",
          correct.key,
          "--order-ids",
          ids,
          "--budget",
          "2s",
        ].concat(["--max-body", "100"]),
        NO_PROXY_ENV,
      );
      assert.equal(code, 2, stderr);
      assert.match(
        stderr,
        /^error: the first list \(GET .*\/v1\/store\/orders\) was not read whole: the body is larger than the 100 bytes --max-body allows .*; every list would be cut the same, so nothing was judged$/m,
      );
      assert.doesNotMatch(stderr, /the suite's report/);
      assert.equal(correct.deletes.length, 0, "no history was played");
    } finally {
      await correct.close();
    }
  });

  it("stops with one line, exit 2, when the first list is answered 503: the target is not serving", async () => {
    const down = await startExploreTarget({ listStatus: () => 503 });
    try {
      const ids = idsFile("down.json", down.create(4, 0));
      const json = join(folder, "down-report.json");
      const { code, stderr } = await cli(
        [
          "explore",
          "--base-url",
          down.url,
          "--api-key",
          down.key,
          "--order-ids",
          ids,
          "--budget",
          "1s",
        ].concat(["--reporter", `json:${json}`]),
        NO_PROXY_ENV,
      );
      assert.equal(code, 2, stderr);
      assert.match(
        stderr,
        /^error: the target is not serving: GET .*\/v1\/store\/orders was answered 503, .* Run again once it serves; nothing was judged$/m,
      );
      assert.equal(down.deletes.length, 0);
      assert.equal(JSON.parse(readFileSync(json, "utf8")).outcome.verdict, "error");
    } finally {
      await down.close();
    }
  });

  it("an error report never shows credentials the base address held", async () => {
    const reports = join(folder, "credentialed");
    const { code, stderr } = await cli(
      ["explore", "--base-url", "http://alice:S3cretPw@127.0.0.1:9/v1?api_key=QuerySecret1", "--api-key", "k"]
        .concat(["--reporter", `json:${reports}.json`, "--reporter", `junit:${reports}.xml`])
        .concat(["--reporter", `html:${reports}.html`, "--reporter", `script:${reports}.mjs`]),
      NO_PROXY_ENV,
    );
    assert.equal(code, 2, stderr);
    for (const written of [`${reports}.json`, `${reports}.xml`, `${reports}.html`, `${reports}.mjs`]) {
      const text = readFileSync(written, "utf8");
      assert.doesNotMatch(text, /S3cretPw|QuerySecret1|alice/, written);
    }
  });

  it("exits 2 asking whether --base-url is right when the list answers 404", async () => {
    const ids = idsFile("no-v1.json", { pending: ["1"] });
    const noV1 = target.url.replace(/\/v1$/, "");
    const { code, stderr } = await cli(
      ["explore", "--base-url", noV1, "--api-key", target.key, "--order-ids", ids, "--budget", "1s"],
      NO_PROXY_ENV,
    );
    assert.equal(code, 2, stderr);
    assert.match(stderr, /^error: GET \S+\/store\/orders was answered 404: is --base-url right\?/m);
  });

  it("refuses an --order-ids file whose ids are not strings of digits", async () => {
    const ids = idsFile("numbers.json", '{"pending": [9007199254740993]}');
    const { code, stderr } = await cli([
      "explore",
      "--base-url",
      target.url,
      "--api-key",
      "k",
      "--order-ids",
      ids,
    ]);
    assert.equal(code, 2);
    assert.match(stderr, /pending\[0\] must be a string of digits/);
  });

  it("plays programs that need no more pending orders than the run was given", async () => {
    const correct = await startExploreTarget();
    try {
      const ids = idsFile("one.json", { pending: correct.create(1, 0).pending });
      const { code, stdout, stderr } = await cli(
        ["explore", "--base-url", correct.url, "--api-key", correct.key, "--order-ids", ids, "--seed", "7"],
        NO_PROXY_ENV,
      );
      assert.equal(code, 0, stderr);
      // Programs of lists alone may be played beside the one that used the order.
      assert.match(stdout, /covered \d+ histories, \d+ operations, 1 orders/);
    } finally {
      await correct.close();
    }
  });

  it("exits 2 with one line saying what to do when it judged no history", async () => {
    const hooks = idsFile("dry.mjs", "export function provision() { return {}; }\n");
    // A seed whose early programs include one of lists alone: it plays, but judges none of the run's orders.
    const { code, stderr } = await cli(
      ["explore", "--base-url", target.url, "--api-key", target.key, "--hooks", hooks].concat([
        "--budget",
        "1s",
        "--seed",
        "214294615",
      ]),
      NO_PROXY_ENV,
    );
    assert.equal(code, 2, stderr);
    const errors = stderr.split("\n").filter((line) => line.startsWith("error:"));
    assert.equal(errors.length, 1);
    assert.match(errors[0] as string, /judged no history: .*give more pending orders .*or fewer --clients/);
  });

  it("skips the orders given as pending that the first list does not show, and says how many", async () => {
    const correct = await startExploreTarget();
    try {
      const given = correct.create(4, 0);
      const absent = "9223372036854775807";
      const ids = idsFile("absent.json", { pending: [...given.pending, absent] });
      const args = ["explore", "--base-url", correct.url, "--api-key", correct.key];
      const { code, stdout, stderr } = await cli(
        [...args, "--order-ids", ids, "--budget", "1s", "--clients", "2"],
        NO_PROXY_ENV,
      );
      // Four orders may give no overlap, which is not a pass.
      assert.equal(code, /overlap: 0 pairs/.test(stdout) ? 2 : 0, stdout + stderr);
      assert.match(
        stdout,
        /^warning: 1 of the orders given as pending are not in the list \(cancelled or removed already, or of another deployment\), so they were skipped: 9223372036854775807; check --order-ids FILE$/m,
      );
      assert.ok(!correct.deletes.includes(absent), "a cancel was sent to an order the list did not show");
      assert.ok(correct.deletes.length > 0);
      const hooks = idsFile("absent.mjs", 'export function beforeRun() { return { pending: ["5"] }; }\n');
      const fromHook = await cli([...args, "--hooks", hooks], NO_PROXY_ENV);
      assert.equal(fromHook.code, 2, fromHook.stderr);
      assert.match(
        fromHook.stderr,
        /^error: none of the 1 orders given as pending is in the list \(.*\): give fresh ones in the beforeRun hook's pending ids$/m,
      );
    } finally {
      await correct.close();
    }
  });

  it("exits 2, not 1, when the list that checks the orders given cannot be read: a stale file is no finding", async () => {
    // The first list is the run's probe; the next three, the check of the orders given.
    for (const [failing, expected] of [
      [3, 2],
      [1, 0],
    ] as const) {
      const flaky = await startExploreTarget({ listStatus: (n) => (n >= 2 && n < 2 + failing ? 503 : 200) });
      try {
        const given = flaky.create(4, 0);
        const stale = "1152921504606846975";
        const ids = idsFile(`stale-${failing}.json`, { pending: [...given.pending, stale] });
        const { code, stdout, stderr } = await cli(
          ["explore", "--base-url", flaky.url, "--api-key", flaky.key, "--order-ids", ids].concat([
            "--budget",
            "1s",
            "--clients",
            "2",
          ]),
          NO_PROXY_ENV,
        );
        // Four orders may give no overlap, which is not a pass.
        const noOverlap = expected === 0 && /overlap: 0 pairs/.test(stdout);
        assert.equal(code, noOverlap ? 2 : expected, stdout + stderr);
        assert.ok(!flaky.deletes.includes(stale), "a cancel was sent to an order no list showed");
        if (expected === 2)
          assert.match(
            stderr,
            /^error: the orders given as pending could not be checked against the list, which was not read whole in 3 tries \(the last: GET \/v1\/store\/orders answered 503; its body began .*\): an order that is not there would be blamed on the target; nothing was judged$/m,
          );
        else assert.match(stdout, /so they were skipped: 1152921504606846975;/);
      } finally {
        await flaky.close();
      }
    }
  });

  it("exits 2 with a release hook's one-line error, its histories halted at once", async () => {
    const correct = await startExploreTarget();
    try {
      const ids = idsFile("halt.json", correct.create(400, 0));
      // The hook marks the moment it throws with a cancel of its own (an id the run never holds), thrown
      // once that request is written.
      const hooks = idsFile(
        "release-throws.mjs",
        `import { request } from "node:http";
let releases = 0;
export async function release(context) {
  if (++releases !== 2) return;
  await new Promise((resolve, reject) => {
    const marker = request(context.baseUrl + "/store/orders/7", {
      method: "DELETE",
      headers: { authorization: "Bearer " + context.apiKey },
    });
    marker.on("error", reject).on("response", (response) => response.resume());
    marker.end(resolve);
  });
  throw new Error("release failed");
}
`,
      );
      const { code, stderr } = await cli(
        ["explore", "--base-url", correct.url, "--api-key", correct.key, "--order-ids", ids].concat([
          "--hooks",
          hooks,
          "--clients",
          "4",
          "--parallel",
          "4",
          "--budget",
          "30s",
          "--seed",
          "1",
        ]),
        NO_PROXY_ENV,
      );
      assert.equal(code, 2, stderr);
      const errors = stderr.split("\n").filter((line) => line.startsWith("error:"));
      assert.deepEqual(errors, ["error: the release hook failed: release failed"]);
      const marked = correct.deletes.indexOf("7");
      assert.ok(marked >= 0, "the hook never threw");
      // Each client of each history had at most one request out when the hook threw.
      const after = correct.deletes.length - marked - 1;
      assert.ok(after <= 4 * 4, `${after} cancels after the hook threw`);
    } finally {
      await correct.close();
    }
  });

  it("writes the reports asked for, marked interrupted, and exits 130 on Ctrl-C", async () => {
    const correct = await startExploreTarget();
    try {
      const ids = idsFile("many.json", correct.create(5000, 2));
      const report = join(folder, "interrupted.json");
      const bin = fileURLToPath(new URL("../bin.ts", import.meta.url));
      const child = spawn(
        process.execPath,
        ["--import", "tsx", bin, "explore", "--base-url", correct.url, "--api-key", correct.key].concat([
          "--order-ids",
          ids,
          "--budget",
          "10m",
          "--reporter",
          `json:${report}`,
          "--reporter",
          `html:${report}.html`,
          "--reporter",
          `junit:${report}.xml`,
        ]),
        { env: { ...process.env, ...NO_PROXY_ENV }, stdio: ["ignore", "pipe", "pipe"] },
      );
      let stdout = "";
      child.stdout.on("data", (chunk) => {
        stdout += chunk;
      });
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      // Stopped once some histories were played, so that the report has something covered to say.
      while (correct.deletes.length < 50 && child.exitCode === null) await sleep(20);
      child.kill("SIGINT");
      assert.equal(await exited, 130);
      assert.match(stdout, /INTERRUPTED by SIGINT/);
      const json = JSON.parse(readFileSync(report, "utf8"));
      assert.equal(json.interrupted, "SIGINT");
      assert.equal(json.ended, "interrupted");
      assert.equal(json.passed, false);
      assert.ok(json.coverage.histories > 0);
      assert.match(readFileSync(`${report}.html`, "utf8"), /Interrupted by SIGINT: nothing found/);
      // Not an empty or passing suite: a case of its own says the run was interrupted.
      const xml = readFileSync(`${report}.xml`, "utf8");
      assert.match(xml, /<testcase[^>]*name="run: interrupted"[^>]*>\s*<error[^>]*type="Interrupted"/);
      assert.match(xml, /errors="1"/);
    } finally {
      await correct.close();
    }
  });

  it("at SIGTERM gives up on answers that never complete, and writes its reports", {
    timeout: 120_000,
  }, async () => {
    // Every list after the two checks at the start never completes: histories wait on them until the stop.
    const stalling = await startExploreTarget({ stallListsAfter: 2 });
    try {
      const ids = idsFile("stalling.json", stalling.create(200, 2));
      const report = join(folder, "stalled.json");
      const bin = fileURLToPath(new URL("../bin.ts", import.meta.url));
      const child = spawn(
        process.execPath,
        ["--import", "tsx", bin, "explore", "--base-url", stalling.url, "--api-key", stalling.key].concat([
          ...["--order-ids", ids, "--budget", "10m", "--timeout", "10m", "--deadline", "10m"],
          ...["--reporter", `json:${report}`],
        ]),
        { env: { ...process.env, ...NO_PROXY_ENV }, stdio: ["ignore", "pipe", "pipe"] },
      );
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (text: string) => {
        stderr += text;
      });
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      // Stopped once a history has sent its cancels: its lists are out, never to complete.
      while (stalling.deletes.length < 2 && child.exitCode === null) await sleep(20);
      child.kill("SIGTERM");
      assert.equal(await exited, 143, stderr);
      assert.doesNotMatch(stderr, /did not finish/);
      const json = JSON.parse(readFileSync(report, "utf8"));
      assert.equal(json.interrupted, "SIGTERM");
      assert.equal(json.passed, false);
    } finally {
      await stalling.close();
    }
  });

  it("exits 1 on a finding, with the history in JSON, one JUnit case per property, an SVG timeline, Markdown and a script", async () => {
    const given = target.create(8, 2);
    const ids = idsFile("ids.json", { ...given, missing: ["77"] });
    const report = (name: string) => join(folder, name);
    const { code, stdout, stderr } = await cli(
      [
        "explore",
        ...["--base-url", target.url, "--api-key", target.key, "--order-ids", ids, "--seed", "7"],
        ...["--budget", "5s", "--shrink-budget", "5s", "--replays", "2"],
        ...["--reporter", "pretty", "--reporter", `json:${report("r.json")}`],
        ...["--reporter", `junit:${report("r.xml")}`, "--reporter", `html:${report("r.html")}`],
        ...["--reporter", `script:${report("replay.mjs")}`, "--reporter", `markdown:${report("r.md")}`],
      ],
      NO_PROXY_ENV,
    );
    assert.equal(code, 1, stderr);
    // The seed once, where the pretty report is.
    assert.match(stdout, /^seed 7 \(--seed 7 plays the same programs\)/m);
    assert.doesNotMatch(stderr, /seed 7/);
    assert.match(stdout, /FAIL: a history the spec's model cannot explain/);
    assert.match(
      stdout,
      /^ {2}to replay: --seed 7 plays the same programs; --reporter script:FILE writes a script/m,
    );
    assert.match(readFileSync(report("r.xml"), "utf8"), /<failure[^>]*>[^<]*to replay: --seed 7 plays/);
    assert.match(readFileSync(report("r.html"), "utf8"), /<p>To replay: --seed 7 plays the same programs;/);
    assert.doesNotMatch(
      readFileSync(report("r.md"), "utf8"),
      /\| `([a-z-]+)` \| \1 /,
      "the rule id said twice",
    );
    assert.match(stdout, /cancel-answer-matches-state/);
    // Replayed while the orders given last; "not replayed" when the finding used them up.
    assert.match(stdout, /; (failed \d+ of \d+ replays|not replayed)\n/);
    const json = JSON.parse(readFileSync(report("r.json"), "utf8"));
    assert.equal(json.passed, false);
    assert.equal(json.seed, 7);
    const operation = json.finding.history.operations[0];
    for (const field of ["client", "op", "sentAt", "answeredAt", "status"])
      assert.ok(field in operation, field);
    assert.ok(given.pending.includes(json.finding.history.given.pending[0]), "ids stay exact digits");
    const xml = readFileSync(report("r.xml"), "utf8");
    assert.match(xml, /<testcase[^>]*name="cancel-once/);
    assert.match(xml, /<failure[^>]*HistoryFinding/);
    const html = readFileSync(report("r.html"), "utf8");
    assert.match(html, /<svg /);
    assert.doesNotMatch(html, /<script/);
    const markdown = readFileSync(report("r.md"), "utf8");
    assert.match(markdown, /^### Petstore Store Orders explore: ❌ a finding$/m);
    assert.match(markdown, /\n\n$/);
    assert.doesNotMatch(readFileSync(report("replay.mjs"), "utf8"), new RegExp(target.key));
    // The script plays the minimal program again against fresh orders, with Node alone.
    const fresh = target.create(4, 1);
    const replayed = await new Promise<{ code: number; stdout: string }>((resolve) =>
      execFile(
        process.execPath,
        [report("replay.mjs"), JSON.stringify({ ...fresh, missing: ["77"] })],
        { env: { ...process.env, PETSTORE_API_KEY: target.key } },
        (error, out) => resolve({ code: error ? Number(error.code) : 0, stdout: out }),
      ),
    );
    // 1 when every answer is the failing run's (the failure seen again), 0 when one is not.
    assert.equal(replayed.code, /^every answer/m.test(replayed.stdout) ? 1 : 0, replayed.stdout);
    assert.match(replayed.stdout, /client 0 cancel \d+ -> (204|409)/);
  });

  it("exits 0 when nothing is found, and says what it covered", async () => {
    const correct = await startExploreTarget();
    try {
      const ids = idsFile("correct.json", correct.create(40, 2));
      const { code, stdout } = await cli(
        [
          "explore",
          "--base-url",
          correct.url,
          "--api-key",
          correct.key,
          "--order-ids",
          ids,
          "--budget",
          "1s",
        ],
        NO_PROXY_ENV,
      );
      assert.equal(code, 0, stdout);
      assert.match(stdout, /PASS/);
      assert.match(
        stdout,
        /covered \d+ histories, \d+ operations, \d+ orders, up to \d+ clients; overlap: \d+ pairs/,
      );
      assert.match(stdout, /the budget \(1000 ms\) was spent|the orders given were used up/);
    } finally {
      await correct.close();
    }
  });

  it("counts every wait against --budget: a 429 asking to come back in 2100 ends the run, said, exit 2", {
    timeout: 60_000,
  }, async () => {
    // The first list (the probe) and the check of the orders given are answered; every later one is a
    // 429 whose Retry-After is decades off, which --max-retry-wait 1h would let the run wait out.
    for (const free of [0, 2]) {
      const throttled = await startExploreTarget({
        listStatus: (n) => (n <= free ? 200 : 429),
        retryAfter: "Fri, 01 Jan 2100 00:00:00 GMT",
      });
      try {
        const ids = idsFile(`throttled-${free}.json`, throttled.create(20, 1));
        const { code, stdout, stderr } = await cli(
          ["explore", "--base-url", throttled.url, "--api-key", throttled.key, "--order-ids", ids].concat([
            "--budget",
            "1s",
            "--timeout",
            "1s",
            "--max-retry-wait",
            "1h",
          ]),
          NO_PROXY_ENV,
        );
        assert.equal(code, 2, stdout + stderr);
        const errors = stderr.split("\n").filter((line) => line.startsWith("error:"));
        assert.equal(errors.length, 1, stderr);
        assert.match(
          errors[0] as string,
          free === 0
            ? /the first list .* had no answer within the run's --budget \(1000 ms\) and 1000 ms of grace, its 429s waited out included: nothing was judged/
            : /explore judged nothing: none of its \d+ lists was read whole \(the first: stopped before their answer\)/,
        );
      } finally {
        await throttled.close();
      }
    }
  });

  it("exits 2, not 0, when no two operations on one order overlapped: it could not have found a race", async () => {
    const correct = await startExploreTarget();
    try {
      const ids = idsFile("one-client.json", correct.create(20, 1));
      const json = join(folder, "one-client-report.json");
      const { code, stdout } = await cli(
        ["explore", "--base-url", correct.url, "--api-key", correct.key, "--order-ids", ids].concat([
          "--budget",
          "1s",
          "--clients",
          "1",
          "--reporter",
          "pretty",
          "--reporter",
          `json:${json}`,
        ]),
        NO_PROXY_ENV,
      );
      assert.equal(code, 2, stdout);
      assert.match(stdout, /overlap: 0 pairs/);
      assert.match(stdout, /NOT A PASS: not everything checked/);
      assert.match(
        stdout,
        /no two operations on one order overlapped in time, so no race could be found: give more --clients/,
      );
      assert.doesNotMatch(stdout, /PASS: no history/);
      const outcome = JSON.parse(readFileSync(json, "utf8")).outcome;
      assert.equal(outcome.verdict, "partial");
    } finally {
      await correct.close();
    }
  });

  it("exits 2, not 1, saying once that standard output took no report, when nothing reads it", async () => {
    const correct = await startExploreTarget();
    try {
      const ids = idsFile("closed-stdout.json", correct.create(20, 2));
      const json = join(folder, "closed-stdout-report.json");
      const args = ["explore", "--base-url", correct.url, "--api-key", correct.key, "--order-ids", ids];
      const child = spawn(
        process.execPath,
        ["--import", "tsx", fileURLToPath(new URL("../bin.ts", import.meta.url)), ...args].concat([
          "--budget",
          "500ms",
          "--reporter",
          `json:${json}`,
        ]),
        { env: { ...process.env, ...NO_PROXY_ENV }, stdio: ["ignore", "pipe", "pipe"] },
      );
      child.stdout.destroy();
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (text: string) => {
        stderr += text;
      });
      const code = await new Promise((done) => child.on("close", done));
      assert.equal(code, 2, stderr);
      assert.equal(stderr.match(/cannot write the report to standard output/g)?.length, 1, stderr);
      assert.doesNotMatch(stderr, /\n\s+at /);
      assert.ok(JSON.parse(readFileSync(json, "utf8")).coverage.histories > 0);
    } finally {
      await correct.close();
    }
  });

  describe("lists with an order that has no int64 id", () => {
    const run = async (name: string, idless: (n: number) => boolean) => {
      const lists = await startExploreTarget({ idlessOrderInList: idless });
      try {
        const ids = idsFile(`${name}.json`, lists.create(40, 2));
        const report = (kind: string) => join(folder, `${name}.${kind}`);
        const result = await cli(
          ["explore", "--base-url", lists.url, "--api-key", lists.key, "--order-ids", ids]
            .concat(["--budget", "1s", "--clients", "3", "--reporter", "pretty"])
            .concat(["json", "junit", "html"].flatMap((kind) => ["--reporter", `${kind}:${report(kind)}`])),
          NO_PROXY_ENV,
        );
        const read = (kind: string) => readFileSync(report(kind), "utf8");
        return { ...result, json: JSON.parse(read("json")), junit: read("junit"), html: read("html") };
      } finally {
        await lists.close();
      }
    };

    it("are no finding (no field of an Order is required), and every report counts them, with the first", async () => {
      // The run's first two lists (its probe and the check of the ids given) are read whole.
      const { code, stdout, stderr, json, junit, html } = await run(
        "idless-few",
        (n) => n > 2 && n % 4 === 0,
      );
      assert.equal(code, 0, stdout + stderr);
      assert.match(
        stdout,
        /^lists not judged: \d+ of \d+ \(they say nothing of which orders exist; not a finding\)$/m,
      );
      const first =
        /^ {2}\d+ some of their orders have no int64 id; the first: GET \/v1\/store\/orders answered 200: 1 of its \d+ orders has no int64 id$/m;
      assert.match(stdout, first);
      assert.match(stdout, /PASS/);
      assert.equal(json.outcome.verdict, "passed");
      assert.equal(json.listsNotJudged[0].reason, "some of their orders have no int64 id");
      assert.equal(json.listsNotJudged[0].limit, false);
      assert.equal(json.listsNotJudged[0].count, json.coverage.lists - json.coverage.listsReadWhole);
      assert.match(
        junit,
        /<property name="lists not judged" value="\d+ some of their orders have no int64 id; the first: /,
      );
      assert.match(html, /lists not judged: \d+ of \d+/);
    });

    it("exit 2 when they are more than half the lists: a pass would rest on too little", async () => {
      const { code, stdout, stderr, json, junit, html } = await run(
        "idless-most",
        (n) => n > 2 && n % 3 !== 0,
      );
      assert.equal(code, 2, stdout + stderr);
      assert.match(stdout, /^NOT A PASS: not everything checked/m);
      assert.match(
        stdout,
        /only \d+ of \d+ lists were judged \(\d+ some of their orders have no int64 id\), fewer than half/,
      );
      assert.doesNotMatch(stdout, /^PASS/m);
      assert.equal(json.outcome.verdict, "partial");
      assert.equal(json.passed, false);
      assert.match(
        junit,
        /<testcase classname="petstore-conformance explore" name="run: not everything checked">\s*<error /,
      );
      assert.match(html, /Not a pass: only \d+ of \d+ lists were judged/);
    });
  });
});

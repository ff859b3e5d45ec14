import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { tempFolder } from "../../common/temp-folder.ts";
import { type ExploreTarget, startExploreTarget } from "../../test-support/explore-target.ts";
import { renderExploreScript } from "../explore/report-script.ts";
import type { CancelOperation, ListOperation } from "../model/history.ts";
import { RECORDED_ORDER, recordedResult, twoCancelsHistory } from "./explore-recorded-result.ts";
import { cli, NO_PROXY_ENV } from "./run-cli.ts";

const GATE_TOKEN = "gate-secret-4711";
const SESSION = "replay-session";

/**
 * A gateway in front of the target: it passes on only requests that carry the run's token and session
 * header, and answers 403 to the others.
 */
async function startGate(target: ExploreTarget): Promise<{ url: string; server: Server }> {
  const upstream = new URL(target.url);
  const server = createServer((incoming, answer) => {
    if (
      incoming.headers["x-gateway-token"] !== GATE_TOKEN ||
      incoming.headers["x-mock-session"] !== SESSION
    ) {
      answer.writeHead(403).end();
      return;
    }
    const forwarded = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (response) => {
        answer.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(answer);
      },
    );
    forwarded.on("error", () => answer.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server };
}

function runScript(path: string, ids: object | string[], env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(
      process.execPath,
      [path, ...(Array.isArray(ids) ? ids : [JSON.stringify(ids)])],
      { env: { ...process.env, ...NO_PROXY_ENV, ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    ),
  );
}

describe("explore's reproduction script", () => {
  let target: ExploreTarget;
  let gate: { url: string; server: Server };
  before(async () => {
    target = await startExploreTarget({ defect: "number-id-cache" });
    gate = await startGate(target);
  });
  after(async () => {
    gate.server.closeAllConnections();
    gate.server.close();
    await target.close();
  });

  it("sends the run's session and headers again, each secret read from its variable, never written", async () => {
    const folder = tempFolder("explore-script-");
    const ids = join(folder, "ids.json");
    const script = join(folder, "replay.mjs");
    writeFileSync(ids, JSON.stringify(target.create(8, 2)));
    const run = await cli(
      [
        "explore",
        ...["--base-url", gate.url, "--api-key", target.key, "--order-ids", ids, "--seed", "7"],
        ...["--session", SESSION, "--header-from-env", "X-Gateway-Token=GATE_TOKEN"],
        ...["--budget", "5s", "--shrink-budget", "5s", "--replays", "2", "--reporter", `script:${script}`],
      ],
      { ...NO_PROXY_ENV, GATE_TOKEN: GATE_TOKEN },
    );
    assert.equal(run.code, 1, run.stderr + run.stdout);
    const text = readFileSync(script, "utf8");
    assert.doesNotMatch(text, new RegExp(`${GATE_TOKEN}|${target.key}`));
    assert.match(text, /^\/\/ {3}PETSTORE_API_KEY=… X_GATEWAY_TOKEN=… node /m);
    assert.match(text, /X-Gateway-Token from \$X_GATEWAY_TOKEN, X-Mock-Session as the run sent it/);

    const fresh = target.create(4, 1);
    const replayed = await runScript(script, fresh, {
      PETSTORE_API_KEY: target.key,
      X_GATEWAY_TOKEN: GATE_TOKEN,
    });
    // 1 when every answer is the failing run's (the failure seen again), 0 when one is not.
    assert.equal(replayed.code, /^every answer/m.test(replayed.stdout) ? 1 : 0, replayed.stderr);
    assert.match(replayed.stdout, /cancel \d+ -> (204|409)/);
    assert.doesNotMatch(replayed.stdout, /-> 403/);

    const withoutToken = await runScript(script, fresh, {
      PETSTORE_API_KEY: target.key,
      X_GATEWAY_TOKEN: "",
    });
    assert.equal(withoutToken.code, 2);
    assert.match(
      withoutToken.stderr,
      /^set X_GATEWAY_TOKEN to the value of the X-Gateway-Token header the run sent$/m,
    );
  });

  it("says whether each answer is the failing run's, step by step", async () => {
    const folder = tempFolder("explore-script-");
    const script = join(folder, "replay.mjs");
    writeFileSync(script, renderExploreScript(recordedResult()));
    // The recorded finding: a list showing the order, then two 204s for it.
    let cancels = 0;
    let secondCancel = 204;
    const store = createServer((incoming, answer) => {
      if (incoming.method === "DELETE") {
        cancels++;
        answer.writeHead(cancels === 1 ? 204 : secondCancel).end();
        return;
      }
      answer
        .writeHead(200, { "content-type": "application/json" })
        .end(`[{"id":${RECORDED_ORDER},"petId":1,"quantity":1}]`);
    });
    await new Promise<void>((resolve) => store.listen(0, "127.0.0.1", resolve));
    const env = {
      PETSTORE_API_KEY: "k",
      PETSTORE_BASE_URL: `http://127.0.0.1:${(store.address() as AddressInfo).port}/v1`,
    };
    try {
      const again = await runScript(script, { pending: [RECORDED_ORDER] }, env);
      assert.equal(again.code, 1, "a failure seen again fails the script, as a test would");
      assert.match(again.stdout, /^every answer \(3\) is the failing run's/m);
      cancels = 0;
      secondCancel = 409;
      const fixed = await runScript(script, { pending: [RECORDED_ORDER] }, env);
      assert.equal(fixed.code, 0, "an answer not the failing run's passes the script");
      assert.match(
        fixed.stdout,
        /^2 of 3 answers are the failing run's; not the same: client \d step \d: 409, in the failing run 204$/m,
      );
      // A failing run cut short before client 1's cancel, whose list was not read whole: that list is
      // compared by its status, and client 1 not at all, which the last line says.
      const recorded = twoCancelsHistory();
      const [list, , second] = recorded.operations as [ListOperation, CancelOperation, CancelOperation];
      const cut = { ...recorded, operations: [{ ...list, shown: null }, second] };
      const cutScript = join(folder, "replay-cut.mjs");
      writeFileSync(cutScript, renderExploreScript(recordedResult({}, cut)));
      cancels = 0;
      secondCancel = 204;
      const cutAgain = await runScript(cutScript, { pending: [RECORDED_ORDER] }, env);
      assert.match(
        cutAgain.stdout,
        /^every answer \(2\) is the failing run's: .* \(not compared: clients 1, whose steps the failing run did not all send\)$/m,
      );
    } finally {
      store.closeAllConnections();
      store.close();
    }
  });

  it("refuses, with one line and exit 2, an argument that does not name every id it needs, before any request", async () => {
    const folder = tempFolder("explore-script-");
    const script = join(folder, "replay.mjs");
    writeFileSync(script, renderExploreScript(recordedResult()));
    const requests: string[] = [];
    const store = createServer((incoming, answer) => {
      requests.push(`${incoming.method} ${incoming.url}`);
      answer.writeHead(204).end();
    });
    await new Promise<void>((resolve) => store.listen(0, "127.0.0.1", resolve));
    const env = {
      PETSTORE_API_KEY: "k",
      PETSTORE_BASE_URL: `http://127.0.0.1:${(store.address() as AddressInfo).port}/v1`,
    };
    try {
      const refused = [
        ['{"pending":"1102"}', /pending is not an array/],
        ["1103", /the argument is not a JSON object/],
        ['{"pending":[]}', /the program needs 1 pending id, 0 given/],
        ['{"pending":[""]}', /pending\[0\] is not a string of digits within int64 \(got ""\)/],
        ['{"pending":[1102]}', /pending\[0\] is not a string of digits within int64 \(got 1102\)/],
        ['{"pending":["9223372036854775808"]}', /pending\[0\] is not a string of digits within int64/],
        ['{"pendng":["1102"]}', /unknown key "pendng"/],
        ["{", /the argument is not JSON/],
      ] as const;
      for (const [argument, why] of refused) {
        const { code, stdout, stderr } = await runScript(script, [argument], env);
        assert.equal(code, 2, `${argument}: ${stdout}${stderr}`);
        assert.equal(stdout, "");
        assert.equal(stderr.trimEnd().split("\n").length, 1, stderr);
        assert.match(stderr, why);
        assert.match(stderr, /^error: .*; give one argument, JSON \{"pending":\["…"\]/);
      }
      const twoArguments = await runScript(script, ['{"pending":["1"]}', "x"], env);
      assert.equal(twoArguments.code, 2);
      assert.equal(requests.length, 0, requests.join(", "));
      const given = await runScript(script, { pending: [RECORDED_ORDER] }, env);
      assert.equal(given.code, 0, given.stderr);
      assert.ok(requests.includes(`DELETE /v1/store/orders/${RECORDED_ORDER}`), requests.join(", "));
      assert.ok(
        requests.every(
          (sent) => sent === `DELETE /v1/store/orders/${RECORDED_ORDER}` || sent === "GET /v1/store/orders",
        ),
      );
    } finally {
      store.closeAllConnections();
      store.close();
    }
  });
});

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { type RedisService, startRedis } from "../../test-support/services.ts";
import { type MockProcess, runMainToExit, startMockProcess } from "../../test-support/spawn-mock.ts";
import { wholeBytes } from "../core/exchange.ts";
import { generateOrders } from "../core/generate.ts";
import { createSeed } from "../core/seed.ts";
import { RedisState } from "../state/redis-state.ts";
import { parseStoreUrl, type StoreAddress } from "../state/store-url.ts";
import { assertError, caseApi } from "./control-cases.ts";
import { SHARED_CASES } from "./shared-cases.ts";
import { steadyLoad } from "./steady-load.ts";
import { AUTH } from "./support.ts";
import { httpTransport, sendToProcess as send } from "./transports.ts";

const originOf = (mock: MockProcess) => new URL(mock.url).origin;
let prefixes = 0;
/** Each test has keys of its own in the one Redis, as several mocks sharing a Redis would. */
const freshPrefix = () => `test-${process.pid}-${++prefixes}:`;

function replicas(
  redis: RedisService,
  prefix: string,
  count = 2,
  extra: string[] = [],
): Promise<MockProcess[]> {
  return Promise.all(
    Array.from({ length: count }, () =>
      startMockProcess(["--quiet", "--store", redis.url, "--store-prefix", prefix, ...extra]),
    ),
  );
}

describe("state in Redis, shared by replicas (a real redis-server and real mock processes)", () => {
  let redis: RedisService;
  before(async () => {
    redis = await startRedis();
  });
  after(() => redis.stop());

  describe("every API and control case, on a mock whose worlds live in Redis", () => {
    let mock: MockProcess;
    before(async () => {
      [mock] = (await replicas(redis, freshPrefix(), 1)) as [MockProcess];
    });
    after(() => mock.stop());
    for (const [index, testCase] of SHARED_CASES.entries()) {
      it(testCase.name, () => testCase.run(caseApi(httpTransport(originOf(mock)), `redis-${index}`)));
    }
  });

  it("500 concurrent cancels of one pending order split across two replicas: exactly one 204", async () => {
    const [a, b] = (await replicas(redis, freshPrefix())) as [MockProcess, MockProcess];
    try {
      const statuses = await Promise.all(
        Array.from({ length: 500 }, (_, index) =>
          send(index % 2 === 0 ? a : b, "DELETE", "/v1/store/orders/2", AUTH).then((answer) => answer.status),
        ),
      );
      assert.equal(statuses.filter((status) => status === 204).length, 1);
      assert.equal(statuses.filter((status) => status === 409).length, 499);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it("a session made on one replica is used on the other; control changes, rules and resets are seen by both", async () => {
    const [a, b] = (await replicas(redis, freshPrefix())) as [MockProcess, MockProcess];
    const session = { "x-mock-session": "shared-1" };
    try {
      assert.equal((await send(a, "DELETE", "/v1/store/orders/3", { ...AUTH, ...session })).status, 204);
      assert.equal((await send(b, "DELETE", "/v1/store/orders/3", { ...AUTH, ...session })).status, 409);
      assert.equal(
        (await send(b, "DELETE", "/v1/store/orders/3", AUTH)).status,
        204,
        "the default world is apart",
      );

      const put = await send(
        a,
        "PUT",
        "/__control/orders/9223372036854775806",
        session,
        '{"petId":9007199254740993,"status":"pending"}',
      );
      assert.equal(put.status, 201);
      const listed = (await send(b, "GET", "/v1/store/orders", { ...AUTH, ...session })).text;
      assert.match(listed, /\{"id":9223372036854775806,"petId":9007199254740993\}\]$/, "int64 digits intact");
      assert.deepEqual(
        JSON.parse((await send(b, "GET", "/__control/sessions")).text).map((s: { name: string }) => s.name),
        ["shared-1"],
      );

      // A rule with times: 1 is used once, however the requests are spread.
      await send(
        b,
        "PUT",
        "/__control/behaviour",
        session,
        JSON.stringify({ rules: [{ operation: "listOrders", status: 503, times: 1 }] }),
      );
      const forced = await Promise.all(
        Array.from({ length: 40 }, (_, index) =>
          send(index % 2 ? a : b, "GET", "/v1/store/orders", { ...AUTH, ...session }).then((r) => r.status),
        ),
      );
      assert.equal(forced.filter((status) => status === 503).length, 1);
      assert.deepEqual(JSON.parse((await send(a, "GET", "/__control/behaviour", session)).text), {
        delayMs: 0,
        rules: [],
      });

      assert.equal((await send(b, "POST", "/__control/reset", session)).status, 204);
      assert.equal((await send(a, "DELETE", "/v1/store/orders/3", { ...AUTH, ...session })).status, 204);
      assert.doesNotMatch(
        (await send(a, "GET", "/v1/store/orders", { ...AUTH, ...session })).text,
        /9223372036854775806/,
      );
      // Each replica writes its journal entries after the answers of the same turn: the last ones `a`
      // served reach Redis on their own schedule, and `b` sees them once they have.
      let journal: unknown[] = [];
      for (let tries = 0; tries < 100 && journal.length < 45; tries++) {
        if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 50));
        journal = JSON.parse((await send(b, "GET", "/__control/requests", session)).text);
      }
      assert.ok(journal.length >= 45, "the journal has the requests both replicas served");
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it("sessions past --max-sessions and idle past --session-idle go, whichever replica used them", async () => {
    const [a, b] = (await replicas(redis, freshPrefix(), 2, [
      "--max-sessions",
      "2",
      "--session-idle",
      "1s",
    ])) as [MockProcess, MockProcess];
    const cancelIn = (mock: MockProcess, session: string) =>
      send(mock, "DELETE", "/v1/store/orders/2", { ...AUTH, "x-mock-session": session }).then(
        (r) => r.status,
      );
    const names = async () =>
      JSON.parse((await send(a, "GET", "/__control/sessions")).text).map((s: { name: string }) => s.name);
    try {
      assert.equal(await cancelIn(a, "first"), 204);
      await sleep(5);
      assert.equal(await cancelIn(b, "second"), 204);
      await sleep(5);
      assert.equal(await cancelIn(a, "third"), 204);
      assert.deepEqual(await names(), ["second", "third"], "the least recently used went");
      assert.equal(await cancelIn(b, "first"), 204, "an evicted session starts again from the fixtures");

      await sleep(1_300);
      assert.deepEqual(await names(), []);
      assert.equal(await cancelIn(b, "third"), 204, "an idle session starts again from the fixtures");
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it("strangers with new session names and no key never evict a session kept in Redis", async () => {
    const [a] = (await replicas(redis, freshPrefix(), 1, ["--max-sessions", "2"])) as [MockProcess];
    try {
      const victim = { ...AUTH, "x-mock-session": "victim" };
      assert.equal((await send(a, "DELETE", "/v1/store/orders/2", victim)).status, 204);
      const refused = await Promise.all(
        Array.from({ length: 40 }, (_, index) =>
          send(a, "DELETE", "/v1/store/orders/2", {
            authorization: "Bearer wrong",
            "x-mock-session": `stranger-${index}`,
          }),
        ),
      );
      assert.ok(refused.every((answer) => answer.status === 401));
      const sessions = JSON.parse((await send(a, "GET", "/__control/sessions")).text) as Array<{
        name: string;
      }>;
      assert.deepEqual(
        sessions.map((session) => session.name),
        ["victim"],
      );
      assert.equal((await send(a, "DELETE", "/v1/store/orders/2", victim)).status, 409, "still cancelled");
    } finally {
      await a.stop();
    }
  });

  it("one replica killed with SIGKILL under load: the other answers on, and nothing is lost", async () => {
    const [a, b] = (await replicas(redis, freshPrefix())) as [MockProcess, MockProcess];
    try {
      assert.equal((await send(a, "DELETE", "/v1/store/orders/5", AUTH)).status, 204);
      const load = steadyLoad(async () => (await send(b, "GET", "/v1/store/orders", AUTH)).status);
      await load.answered(5);
      await a.stop("SIGKILL");
      // Ten answers after the kill, however long a loaded machine takes to give them.
      await load.answered(10);
      const statuses = await load.stop();
      assert.ok(
        statuses.every((status) => status === 200),
        `${statuses}`,
      );
      assert.equal(
        (await send(b, "DELETE", "/v1/store/orders/5", AUTH)).status,
        409,
        "the cancel made on the killed replica stays",
      );
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it("Redis stopped mid-traffic: 503 store_unavailable and no crash; restarted: service resumes by itself", async () => {
    const own = await startRedis();
    const [mock] = (await Promise.all([startMockProcess(["--store", own.url, "--log-format", "json"])])) as [
      MockProcess,
    ];
    try {
      assert.equal((await send(mock, "GET", "/v1/store/orders", AUTH)).status, 200);
      await own.stop();
      const down = await send(mock, "GET", "/v1/store/orders", AUTH);
      assertError(down, 503, "store_unavailable");
      assert.equal(down.headers["retry-after"], "1");
      assert.equal((await send(mock, "GET", "/__health")).status, 503);
      assert.equal((await send(mock, "GET", "/__control/orders")).status, 503);

      await own.start();
      let status = 0;
      for (const begun = Date.now(); Date.now() - begun < 10_000 && status !== 200; await sleep(100)) {
        status = (await send(mock, "GET", "/v1/store/orders", AUTH)).status;
      }
      assert.equal(status, 200);
      assert.equal((await send(mock, "GET", "/__health")).text, '{"status":"ok"}');
      assert.match(mock.output(), /state store redis:\/\/127\.0\.0\.1:\d+\/0 lost/);
      assert.match(mock.output(), /is back: serving again/);
      assert.equal(mock.child.exitCode, null, "still running");
    } finally {
      await mock.stop();
      await own.stop();
    }
  });

  it("start-up on a store that cannot be reached: one line naming the address without credentials, exit 1", async () => {
    const gone = await startRedis();
    await gone.stop();
    const exited = await runMainToExit(["--store", `redis://admin:s3cret-pw@127.0.0.1:${gone.port}/2`]);
    assert.equal(exited.code, 1);
    assert.equal(exited.stderr.trim().split("\n").length, 1, exited.stderr);
    assert.match(
      exited.stderr,
      new RegExp(`^error: cannot reach the state store at redis://127\\.0\\.0\\.1:${gone.port}/2: `),
    );
    assert.doesNotMatch(exited.stdout + exited.stderr, /s3cret|admin/);
  });

  it("says which store is in use at start-up and logs requests, never the store's password", async () => {
    const guarded = await startRedis("pw-Zq81-never-shown");
    const mock = await startMockProcess(["--store", guarded.url, "--log-format", "json"]);
    try {
      assert.match(mock.output(), /state: redis redis:\/\/127\.0\.0\.1:\d+\/0 \(prefix "petstore-mock:"\)/);
      assert.equal((await send(mock, "DELETE", "/v1/store/orders/2", AUTH)).status, 204);
      await guarded.stop();
      assert.equal((await send(mock, "GET", "/v1/store/orders", AUTH)).status, 503);
      await sleep(200);
      assert.doesNotMatch(mock.output(), /pw-Zq81/);
    } finally {
      await mock.stop();
      await guarded.stop();
    }
  });
  it("a control page reads only its own orders' fields: the same in a world of 100,000 orders as of 2,000, whatever the session changed", async () => {
    const reads = new Map<number, string[][]>();
    for (const size of [2_000, 100_000]) {
      const prefix = freshPrefix();
      const [mock] = (await replicas(redis, prefix, 1, ["--generate", String(size)])) as [MockProcess];
      const session = { "x-mock-session": "paging" };
      const ids = [...generateOrders(size)].map((order) => String(order.record.id));
      try {
        for (const id of [ids[3], ids[501], ids[502]]) {
          assert.equal((await send(mock, "DELETE", `/__control/orders/${id}`, session)).status, 204);
        }
        for (const id of ["9000000000000000001", "9000000000000000002", "9000000000000000003"]) {
          const body = '{"petId":1,"status":"pending"}';
          assert.equal((await send(mock, "PUT", `/__control/orders/${id}`, session, body)).status, 201);
        }
        assert.equal(
          (await send(mock, "DELETE", "/__control/orders/9000000000000000002", session)).status,
          204,
        );
        if (size > 2_000) await cancelMany(redis, `${prefix}w:s:paging`, ids.slice(50_000, 70_000));
        const pages = [
          "?limit=100",
          `?limit=100&after=${ids[500]}`,
          `?limit=50&status=pending&after=${ids[500]}`,
          `?limit=100&after=${ids.at(-1)}`,
        ];
        const paths = pages.map((page) => `/__control/orders${page}`);
        reads.set(size, await redisReads(redis, prefix, mock, session, paths));
        if (size > 2_000) {
          // No order is cancelled before the 50,001st: pages of a bounded look each, with a cursor to go on.
          let after = "";
          let cancelled: string[] = [];
          let looks = 0;
          while (cancelled.length === 0) {
            const page = await send(
              mock,
              "GET",
              `/__control/orders?status=cancelled&limit=2${after}`,
              session,
            );
            cancelled = (JSON.parse(page.text) as Array<{ id: number }>).map(({ id }) => String(id));
            assert.ok(cancelled.length > 0 || page.headers["x-next-cursor"], "a cursor to go on from");
            after = `&after=${page.headers["x-next-cursor"]}`;
            looks++;
          }
          assert.deepEqual(cancelled, ids.slice(50_000, 50_002));
          assert.ok(looks > 1, "the look stopped short of the world's size");
        }
        const last = await send(mock, "GET", `/__control/orders?limit=100&after=${ids.at(-1)}`, session);
        assert.deepEqual(
          (JSON.parse(last.text) as Array<{ id: number }>).length,
          2,
          "the added orders still there follow the seed's",
        );
        assert.equal(last.headers["x-total-count"], String(size - 3 + 2));
      } finally {
        await mock.stop();
      }
    }
    const small = reads.get(2_000) as string[][];
    assert.ok(small.length > 0);
    assert.ok(
      small.every(([command]) => command === "hmget"),
      `hash reads: ${small.map(([command]) => command)}`,
    );
    assert.deepEqual(fieldsRead(reads.get(100_000) as string[][]), fieldsRead(small));
  });

  it("a page of sessions reads a few counts of each of its own sessions, never a session's hash", async () => {
    const prefix = freshPrefix();
    const [mock] = (await replicas(redis, prefix, 1)) as [MockProcess];
    try {
      const names = Array.from({ length: 12 }, (_, index) => `page-${String(index).padStart(2, "0")}`);
      for (const name of names) {
        const session = { "x-mock-session": name };
        assert.equal((await send(mock, "DELETE", "/v1/store/orders/2", { ...AUTH, ...session })).status, 204);
      }
      // One session's hash grown large, as 20,000 cancels leave it.
      const ids = Array.from({ length: 20_000 }, (_, index) => String(index + 1));
      await cancelMany(redis, `${prefix}w:s:${names[3]}`, ids);
      const reads = await redisReads(redis, prefix, mock, {}, ["/__control/sessions"]);
      assert.deepEqual(
        reads.map(([command, ...fields]) => `${command} ${fields.join(" ")}`),
        names.map(() => "hmget na nx nc"),
        "one read of three counts per session listed",
      );
      const paths: string[] = [];
      const listed: string[] = [];
      let after = "";
      do {
        const path = `/__control/sessions?limit=5${after}`;
        const page = await send(mock, "GET", path, {});
        assert.equal(page.status, 200, page.text);
        assert.equal(page.headers["x-total-count"], "12");
        const sessions = JSON.parse(page.text) as Array<{ name: string; changes: number; orders: number }>;
        assert.ok(sessions.every(({ changes, orders }) => changes === 1 && orders === 12));
        listed.push(...sessions.map(({ name }) => name));
        paths.push(path);
        after = page.headers["x-next-cursor"] ? `&after=${page.headers["x-next-cursor"]}` : "";
      } while (after !== "");
      assert.deepEqual(listed, names, "every session once, in name order");
      const paged = await redisReads(redis, prefix, mock, {}, paths);
      assert.equal(paged.length, names.length, "pages of five read the same, each session once");
    } finally {
      await mock.stop();
    }
  });

  it("a world in Redis holds at most --max-memory of orders, as in memory: a batch that does not all fit does nothing", async () => {
    const [a, b] = (await replicas(redis, freshPrefix(), 2, ["--max-memory", "64KiB"])) as [
      MockProcess,
      MockProcess,
    ];
    const session = { "x-mock-session": "room" };
    const total = async (mock: MockProcess) =>
      Number((await send(mock, "GET", "/__control/orders?limit=1", session)).headers["x-total-count"]);
    const batch = (mock: MockProcess, create: bigint[], remove: bigint[] = []) =>
      send(
        mock,
        "POST",
        "/__control/orders",
        session,
        `{"create":[${create.map((id) => `{"id":${id},"status":"pending"}`).join(",")}],"remove":[${remove.join(",")}]}`,
      );
    try {
      let next = 1_000_000n;
      let refused: Awaited<ReturnType<typeof batch>> | undefined;
      let before = 0;
      for (let tries = 0; tries < 100 && !refused; tries++) {
        before = await total(b);
        const answer = await batch(
          a,
          Array.from({ length: 100 }, () => next++),
          [1n],
        );
        if (answer.status !== 200) refused = answer;
      }
      assert.ok(refused, "a 64 KiB world is full before 10,000 new orders");
      assertError(refused, 409, "world_full", /Nothing of this batch/);
      assert.equal(await total(b), before, "the other replica sees none of the refused batch");
      let put = await send(a, "PUT", `/__control/orders/${next}`, session, '{"petId":1,"status":"pending"}');
      for (let tries = 0; tries < 100 && put.status === 201; tries++) {
        put = await send(a, "PUT", `/__control/orders/${++next}`, session, '{"petId":1,"status":"pending"}');
      }
      assertError(put, 409, "world_full");
      const held = await total(b);
      const removed = await batch(b, [], [1_000_000n, 1_000_001n]);
      assert.equal(removed.status, 200, removed.text);
      const again = await send(
        a,
        "PUT",
        `/__control/orders/${next}`,
        session,
        '{"petId":1,"status":"pending"}',
      );
      assert.equal(again.status, 201, again.text);
      assert.equal(await total(a), held - 1);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it("sessions' own list bodies count against --max-memory: past it the least recently used is let go here, its orders kept in Redis", async () => {
    const address = parseStoreUrl(redis.url) as StoreAddress;
    const seed = createSeed(generateOrders(2_000));
    const prefix = freshPrefix();
    const own = { petId: 1n, quantity: 1n };
    const connect = (maxBytes?: number) =>
      RedisState.connect({
        address,
        prefix,
        seed,
        limits: { maxSessions: 100, idleMs: 60_000, ...(maxBytes !== undefined ? { maxBytes } : {}) },
        journalSize: 10,
      });
    // What one session's own body holds here, measured on a replica with no budget: the budget fits one and a half.
    let oneBody: number;
    const probe = await connect();
    try {
      for (const name of ["a", "b"]) {
        await probe
          .session(name, Date.now())
          .putOrder({ record: { id: 9_000_000_000n, ...own }, status: "pending" });
      }
      const world = probe.session("a", Date.now());
      await world.arrange(undefined);
      await world.listBody();
      oneBody = world.heldBytes;
    } finally {
      await probe.close();
    }
    assert.ok(oneBody > 0, "a's own body is counted");
    const state = await connect(oneBody * 1.5);
    try {
      let now = Date.now();
      const body = async (name: string) => {
        now += 1_000;
        const world = state.session(name, now);
        await world.arrange(undefined);
        return { world, list: wholeBytes(await world.listBody()) };
      };
      const first = await body("a");
      assert.equal(first.world.heldBytes, oneBody);
      assert.equal((await body("a")).world, first.world, "while under the budget, a stays");
      await body("b");
      now += 1_000;
      state.session("c", now);
      const again = await body("a");
      assert.notEqual(
        again.world,
        first.world,
        "a, the least recently used, was let go with b's body over the budget",
      );
      assert.deepEqual(again.list, first.list, "a's orders are still in Redis");
    } finally {
      await state.close();
    }
  });
});

/** Status changes written as cancels leave them, in one pipeline: a session hash that grew large. */
async function cancelMany(redis: RedisService, hash: string, ids: string[]): Promise<void> {
  const client = new Redis(redis.url);
  try {
    const pipeline = client.pipeline();
    for (const id of ids) pipeline.hset(hash, `s:${id}`, "cancelled");
    await pipeline.exec();
  } finally {
    client.disconnect();
  }
}

/** The hash reads Redis ran on keys of this prefix while the mock answered each of these paths (MONITOR). */
async function redisReads(
  redis: RedisService,
  prefix: string,
  mock: MockProcess,
  headers: Record<string, string>,
  paths: string[],
): Promise<string[][]> {
  const marker = new Redis(redis.url);
  const monitor = await marker.monitor();
  const reads: string[][] = [];
  let markers = 0;
  monitor.on("monitor", (_time: string, args: string[]) => {
    const [command = "", key = ""] = args.map(String);
    if (markers > 0) return;
    if (key === `${prefix}marker`) markers++;
    else if (key.startsWith(prefix) && /^h(get|mget|getall|scan|keys|vals|len)$/i.test(command))
      reads.push([command.toLowerCase(), ...args.slice(2)]);
  });
  try {
    for (const path of paths) {
      const answer = await send(mock, "GET", path, headers);
      assert.equal(answer.status, 200, answer.text);
    }
    // Every command sent before the marker has been seen once the marker is.
    await marker.get(`${prefix}marker`);
    while (markers === 0) await sleep(10);
    return reads;
  } finally {
    monitor.disconnect();
    marker.disconnect();
  }
}

/** How many fields each read asked for, in order. */
function fieldsRead(reads: string[][]): number[] {
  return reads.map((read) => read.length - 1);
}

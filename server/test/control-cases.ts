import assert from "node:assert/strict";
import { parseExact, toSchemaView } from "../../contract/exact-json.ts";
import type { ErrorRecord } from "../../contract/types.ts";
import { contract, controlContract, DEV_KEY } from "./support.ts";
import type { Answer, Transport } from "./transports.ts";

const BIG_PENDING = "9007199254740993";
const MAX_INT64 = "9223372036854775807";
const validateError = contract.schema("Error");
// Node's timers count in whole milliseconds of the loop's clock, so a wait can end just under its length
// when measured with performance.now().
const TIMER_SLACK_MS = 2;
// A world's delay that a request answered at once cannot reach, however busy the machine.
const WORLD_DELAY_MS = 1000;
const validateControlOrder = controlContract.schema("ControlOrder");
const validateJournalEntry = controlContract.schema("JournalEntry");
const validateSession = controlContract.schema("SessionSummary");
const validateBehaviour = controlContract.schema("Behaviour");

interface SendOptions {
  headers?: Record<string, string>;
  body?: unknown;
  /** The API key for /v1 requests: the dev key unless null (none) or another string. */
  key?: string | null;
  /** Leave out the case's X-Mock-Session header and use the default world. */
  defaultWorld?: boolean;
}

/** What a case drives: requests in its own session, on any transport. */
export interface CaseApi {
  send(method: string, path: string, options?: SendOptions): Promise<Answer>;
  readonly session: string;
}

export interface ControlCase {
  name: string;
  run(api: CaseApi): Promise<void>;
}

/** Binds a transport to a session of its own, so cases run side by side on one mock. */
export function caseApi(transport: Transport, session: string): CaseApi {
  return {
    session,
    send(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (!options.defaultWorld && headers["x-mock-session"] === undefined)
        headers["x-mock-session"] = session;
      const key = options.key === undefined ? DEV_KEY : options.key;
      if (path.startsWith("/v1") && key !== null && headers.authorization === undefined) {
        headers.authorization = `Bearer ${key}`;
      }
      let body: string | undefined;
      if (options.body !== undefined) {
        body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
        headers["content-type"] ??= "application/json";
      }
      return transport({ method, path, headers, ...(body !== undefined ? { body } : {}) });
    },
  };
}

export function assertError(answer: Answer, status: number, code: string, mentions?: RegExp): ErrorRecord {
  assert.equal(answer.status, status, answer.text);
  assert.equal(answer.headers["content-type"], "application/json; charset=utf-8");
  const record = JSON.parse(answer.text) as ErrorRecord;
  assert.ok(validateError(record), answer.text);
  assert.equal(record.status, status);
  assert.equal(record.code, code);
  if (mentions) assert.match(record.message, mentions);
  return record;
}

/** Control JSON read exactly; ids come back as their digits. */
function orders(answer: Answer): Array<Record<string, unknown> & { id: string; status: string }> {
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.headers["content-type"], "application/json; charset=utf-8");
  const list = parseExact(answer.text) as Array<Record<string, unknown>>;
  return list.map((order) => ({ ...order, id: String(order.id), status: String(order.status) }));
}

const ids = (answer: Answer) =>
  (parseExact(answer.text) as Array<{ id: unknown }>).map((order) => String(order.id));
const cancel = (api: CaseApi, id: string, options?: SendOptions) =>
  api.send("DELETE", `/v1/store/orders/${id}`, options);
const list = (api: CaseApi, options?: SendOptions) => api.send("GET", "/v1/store/orders", options);
const putOrder = (api: CaseApi, id: string, body: unknown) =>
  api.send("PUT", `/__control/orders/${id}`, { body });

/** The control API, sessions and forced responses, row by row; run in-process and against the process. */
export const CONTROL_CASES: ControlCase[] = [
  {
    name: "GET /__control/orders pages (after, limit), filters by status and finds one id, counting the world",
    async run(api) {
      const page = async (query: string) => {
        const answer = await api.send("GET", `/__control/orders${query}`);
        assert.equal(answer.status, 200, answer.text);
        return {
          ids: orders(answer).map((order) => order.id),
          total: answer.headers["x-total-count"],
          next: answer.headers["x-next-cursor"],
          link: answer.headers.link,
        };
      };
      const first = await page("?limit=5");
      assert.deepEqual(first, {
        ids: ["1", "2", "3", "4", "5"],
        total: "12",
        next: "5",
        link: '</__control/orders?after=5&limit=5>; rel="next"',
      });
      assert.deepEqual((await page("?after=5&limit=5")).ids, ["6", "7", "8", "9", "10"]);
      const last = await page("?after=10&limit=5");
      assert.deepEqual([last.ids, last.next, last.link], [[BIG_PENDING, MAX_INT64], undefined, undefined]);
      assert.equal((await cancel(api, "3")).status, 204);
      assert.deepEqual((await page("?status=shipped")).ids, ["1", "4", "6", "9", MAX_INT64]);
      const cancelled = await page("?status=cancelled&limit=1");
      assert.deepEqual([cancelled.ids, cancelled.next], [["3"], "3"]);
      assert.deepEqual((await page("?status=cancelled&after=3")).ids, [], "no other cancelled order");
      assert.deepEqual((await page(`?id=${BIG_PENDING}`)).ids, [BIG_PENDING]);
      assert.deepEqual((await page("?id=424242")).ids, []);
      assert.equal((await api.send("DELETE", "/__control/orders/4")).status, 204);
      assert.deepEqual(
        (await page("?limit=4")).ids,
        ["1", "2", "3", "5"],
        "a removed order leaves no gap in a page",
      );
      assert.equal((await page("")).total, "11");
      const refused = [
        "?limit=0",
        "?limit=1001",
        "?after=x",
        "?after=424242",
        "?cursor=5",
        "?status=lost",
        "?id=1.5",
        "?page=2",
      ];
      for (const query of refused) {
        assertError(
          await api.send("GET", `/__control/orders${query}`),
          400,
          "invalid_control_request",
          /query parameter/,
        );
      }
      // One limit, written one way, whatever the value that broke it.
      for (const limit of ["0", "1001", "x"]) {
        const answer = await api.send("GET", `/__control/orders?limit=${limit}`);
        assertError(
          answer,
          400,
          "invalid_control_request",
          new RegExp(
            `: query parameter "limit": must be a whole number from 1 to 1000 \\(got "${limit}"\\)\\.$`,
          ),
        );
      }
    },
  },
  {
    name: "POST /__control/orders creates orders whose ids are free and removes others, in one request, bounded",
    async run(api) {
      const order = (id: string, status = "pending") =>
        `{"id":${id},"petId":1,"quantity":1,"shipDate":"2026-11-02T10:00:00Z","complete":false,"status":"${status}"}`;
      const batch = (body: string) => api.send("POST", "/__control/orders", { body });
      const done = await batch(
        `{"create":[${order("9223372036854775806")},${order("1", "pending")},${order("424242", "shipped")}],"remove":[2,${BIG_PENDING},31337]}`,
      );
      assert.equal(done.status, 200, done.text);
      assert.equal(done.headers["content-type"], "application/json; charset=utf-8");
      assert.equal(done.text, `{"created":[9223372036854775806,424242],"removed":[2,${BIG_PENDING}]}`);
      const all = orders(await api.send("GET", "/__control/orders"));
      const byId = new Map(all.map((listed) => [listed.id, listed]));
      assert.equal(byId.get("9223372036854775806")?.status, "pending");
      assert.equal(byId.get("424242")?.status, "shipped");
      assert.equal(byId.get("1")?.status, "shipped", "an order that had the id is left as it was");
      assert.ok(!byId.has("2") && !byId.has(BIG_PENDING));
      assert.equal(all.at(-1)?.id, "424242", "created orders are appended");
      const elsewhere = ids(await api.send("GET", "/__control/orders", { defaultWorld: true }));
      assert.ok(!elsewhere.includes("424242"), "only the session's world changed");

      const many = Array.from({ length: 101 }, (_, at) => String(500 + at));
      assertError(
        await batch(`{"remove":[${many.join(",")}]}`),
        400,
        "invalid_control_request",
        /^Invalid control request: field "remove": must NOT have more than 100 items\.$/,
      );
      assert.equal((await batch(`{"remove":[${many.slice(0, 100).join(",")}]}`)).status, 200);
      for (const [body, mentions] of [
        [`{"create":[{"id":7}]}`, /"create\[0\]": must have required property 'status'|status/],
        [`{"create":[${order("7").replace("}", ',"note":1}')}]}`, /note/],
        [`{"remove":["7"]}`, /remove\[0\]/],
        [`{"remove":[1.5]}`, /remove\[0\]/],
        [`{"delete":[7]}`, /delete/],
        ["[]", /object/],
      ] as const) {
        assertError(await batch(body), 400, "invalid_control_request", mentions);
      }
      assert.equal((await api.send("PATCH", "/__control/orders")).status, 405);
    },
  },
  {
    name: "GET /__control/orders?after=ID: orders removed between pages, the cursor's own included, skip nothing",
    async run(api) {
      const page = async (query: string) => {
        const answer = await api.send("GET", `/__control/orders${query}`);
        assert.equal(answer.status, 200, answer.text);
        return { ids: orders(answer).map((order) => order.id), next: answer.headers["x-next-cursor"] };
      };
      const remove = async (id: string) =>
        assert.equal((await api.send("DELETE", `/__control/orders/${id}`)).status, 204);
      for (const id of ["101", "102", "103", "104"]) {
        assert.equal((await putOrder(api, id, { petId: 7, status: "pending" })).status, 201);
      }
      const first = await page("?limit=4");
      assert.deepEqual(first, { ids: ["1", "2", "3", "4"], next: "4" });
      await remove("2");
      await remove("4");
      assert.deepEqual(await page("?after=4&limit=2"), { ids: ["5", "6"], next: "6" });
      const intoAdded = await page(`?after=${BIG_PENDING}&limit=3`);
      assert.deepEqual(intoAdded, { ids: [MAX_INT64, "101", "102"], next: "102" });
      await remove("101");
      await remove("102");
      assert.deepEqual(await page("?after=102&limit=2"), { ids: ["103", "104"], next: undefined });
      assert.deepEqual(await page("?after=101&status=pending"), { ids: ["103", "104"], next: undefined });
      // A removed seed order added again goes to the end, and paging after it goes on from there.
      assert.equal((await putOrder(api, "4", { petId: 7, status: "pending" })).status, 201);
      assert.deepEqual(await page("?after=103"), { ids: ["104", "4"], next: undefined });
      const all = await api.send("GET", "/__control/orders");
      assert.equal(all.headers["x-total-count"], "13");
      assert.equal(orders(all).length, 13);
    },
  },
  {
    name: "GET /__control/orders lists every order with its status, ids exact",
    async run(api) {
      const answer = await api.send("GET", "/__control/orders");
      const all = orders(answer);
      assert.equal(all.length, 12);
      for (const order of parseExact(answer.text) as unknown[]) {
        assert.ok(validateControlOrder(toSchemaView(order)), JSON.stringify(validateControlOrder.errors));
      }
      assert.match(answer.text, new RegExp(`"id":${BIG_PENDING},[^}]*"status":"pending"`));
      assert.match(answer.text, new RegExp(`"id":${MAX_INT64},[^}]*"status":"shipped"`));
      assert.deepEqual(
        all.slice(0, 3).map((order) => [order.id, order.status]),
        [
          ["1", "shipped"],
          ["2", "pending"],
          ["3", "pending"],
        ],
      );
      assert.equal((await cancel(api, "2")).status, 204);
      const after = orders(await api.send("GET", "/__control/orders"));
      assert.equal(
        after.find((order) => order.id === "2")?.status,
        "cancelled",
        "a cancel shows as cancelled",
      );
    },
  },
  {
    name: "PUT a status: shipped makes a cancel 409, pending makes it 204 again",
    async run(api) {
      const shipped = await putOrder(api, "2", { status: "shipped" });
      assert.equal(shipped.status, 200, shipped.text);
      assert.deepEqual(JSON.parse(shipped.text), {
        id: 2,
        petId: 102,
        quantity: 2,
        shipDate: "2026-11-05T09:30:00Z",
        complete: false,
        status: "shipped",
      });
      assertError(await cancel(api, "2"), 409, "order_not_cancellable");
      assert.equal((await putOrder(api, MAX_INT64, { status: "pending" })).status, 200);
      assert.equal((await cancel(api, MAX_INT64)).status, 204, "the largest int64, exactly");
      assert.equal((await putOrder(api, "2", { status: "pending" })).status, 200);
      assert.equal((await cancel(api, "2")).status, 204);
    },
  },
  {
    name: "PUT a status of an unknown order: 404 Error record",
    async run(api) {
      assertError(await putOrder(api, "424242", { status: "shipped" }), 404, "order_not_found", /424242/);
    },
  },
  {
    name: "PUT a whole new order creates it at the end of the list, ids digit for digit",
    async run(api) {
      const id = "9223372036854775806";
      // Digits in a string are not an int64 to the Order schema: they must be sent as a JSON number.
      const quoted = await putOrder(api, id, { petId: "9007199254740995", quantity: 3, status: "pending" });
      assertError(quoted, 400, "invalid_control_request", /petId/);
      const body = `{"petId":9007199254740995,"quantity":3,"status":"pending"}`;
      const made = await api.send("PUT", `/__control/orders/${id}`, { body });
      assert.equal(made.status, 201, made.text);
      assert.equal(made.text, `{"id":${id},"petId":9007199254740995,"quantity":3,"status":"pending"}`);
      const listed = await list(api);
      assert.equal(ids(listed).at(-1), id);
      assert.match(listed.text, new RegExp(`\\{"id":${id},"petId":9007199254740995,"quantity":3\\}\\]$`));
      assert.equal((await cancel(api, id)).status, 204);
      assertError(await cancel(api, id), 409, "order_not_cancellable");
    },
  },
  {
    name: "PUT a whole existing order replaces it in place",
    async run(api) {
      const replaced = await putOrder(api, "3", { id: 3, quantity: 9, status: "shipped" });
      assert.equal(replaced.status, 200, replaced.text);
      assert.equal(replaced.text, '{"id":3,"quantity":9,"status":"shipped"}');
      const listed = await list(api);
      assert.equal(ids(listed)[2], "3", "it keeps its place");
      assert.match(listed.text, /\{"id":3,"quantity":9\}/);
      assertError(await cancel(api, "3"), 409, "order_not_cancellable");
    },
  },
  {
    name: "PUT bodies that are not valid: 400 invalid_control_request naming the field",
    async run(api) {
      const cases: Array<[string, unknown, RegExp]> = [
        ["5", { id: 6, status: "pending" }, /"id".*path's id 5/],
        ["5", { shipDate: "next tuesday", status: "pending" }, /"shipDate".*date-time/],
        ["5", { colour: "red", status: "pending" }, /"colour": unknown field/],
        ["5", { status: "lost" }, /"status"/],
        ["5", { quantity: 2 }, /"status": is required/],
        ["5", "{not json", /not valid JSON/],
        ["5", "[]", /JSON object/],
        ["abc", { status: "shipped" }, /path parameter "id"/],
        ["9223372036854775808", { status: "shipped" }, /path parameter "id"/],
        ["5", '{"id":9223372036854775808,"status":"pending"}', /"id".*int64/],
        ["5", '{"quantity":1e2,"status":"pending"}', /"quantity": write integers as plain digits/],
      ];
      for (const [id, body, message] of cases) {
        assertError(await putOrder(api, id, body), 400, "invalid_control_request", message);
      }
      assertError(
        await api.send("PUT", "/__control/orders/5"),
        400,
        "invalid_control_request",
        /body is required/,
      );
      assert.equal(
        orders(await api.send("GET", "/__control/orders")).find((o) => o.id === "5")?.status,
        "pending",
      );
    },
  },
  {
    name: "DELETE /__control/orders/{id} removes the order: 204, then 404",
    async run(api) {
      const removed = await api.send("DELETE", "/__control/orders/1");
      assert.equal(removed.status, 204);
      assert.equal(removed.text, "");
      assert.ok(!ids(await list(api)).includes("1"));
      assertError(await cancel(api, "1"), 404, "order_not_found");
      assertError(await api.send("DELETE", "/__control/orders/1"), 404, "order_not_found");
      const recreated = await putOrder(api, "1", { status: "pending" });
      assert.equal(recreated.status, 404, "a status alone cannot bring it back");
      assert.equal((await putOrder(api, "1", { id: 1, status: "pending" })).status, 201);
      assert.equal(ids(await list(api)).at(-1), "1", "re-created at the end");
    },
  },
  {
    name: "POST /__control/reset puts orders back on the fixtures and clears the rules",
    async run(api) {
      assert.equal((await cancel(api, "2")).status, 204);
      await api.send("DELETE", "/__control/orders/3");
      await putOrder(api, "77", { status: "pending" }).then(() =>
        putOrder(api, "77", { id: 77, status: "pending" }),
      );
      await api.send("PUT", "/__control/behaviour", {
        body: { delayMs: 5, rules: [{ operation: "listOrders", status: 503 }] },
      });
      const reset = await api.send("POST", "/__control/reset");
      assert.equal(reset.status, 204);
      const listed = await list(api);
      assert.equal(listed.status, 200);
      assert.equal(ids(listed).length, 12);
      assert.equal((await cancel(api, "2")).status, 204);
      assert.deepEqual(JSON.parse((await api.send("GET", "/__control/behaviour")).text), {
        delayMs: 0,
        rules: [],
      });
    },
  },
  {
    name: "GET /__control/requests is the journal, oldest first, without keys or refused requests; DELETE clears it",
    async run(api) {
      const refusedBefore = Number(
        (await api.send("GET", "/__control/requests")).headers["x-mock-refused-requests"],
      );
      await list(api);
      await cancel(api, "424242", { key: "not-the-key" });
      await api.send("GET", `/v1/store/orders/${"x".repeat(2000)}`);
      await api.send("GET", "/v1/nowhere?token=secret-in-query");
      await api.send("GET", "/__control/orders");
      const answer = await api.send("GET", "/__control/requests");
      assert.equal(answer.status, 200);
      const entries = JSON.parse(answer.text) as Array<Record<string, unknown>>;
      for (const entry of entries)
        assert.ok(validateJournalEntry(entry), JSON.stringify(validateJournalEntry.errors));
      assert.deepEqual(
        entries.map(({ method, path, status, keyValid, session }) => ({
          method,
          path,
          status,
          keyValid,
          session,
        })),
        [
          { method: "GET", path: "/v1/store/orders", status: 200, keyValid: true, session: api.session },
          {
            method: "GET",
            path: `/v1/store/orders/${"x".repeat(512 - "/v1/store/orders/".length)}...`,
            status: 405,
            keyValid: true,
            session: api.session,
          },
          { method: "GET", path: "/v1/nowhere", status: 404, keyValid: true, session: api.session },
        ],
        "control requests and refused keys are not journaled; query strings are left out, long paths cut",
      );
      // Other cases may run beside this one in the same process: the count only grows, by this one's at least.
      assert.ok(
        Number(answer.headers["x-mock-refused-requests"]) >= refusedBefore + 1,
        "the refused request is counted",
      );
      assert.doesNotMatch(answer.text, /not-the-key|dev-key-123|secret-in-query|authorization/i);
      assert.equal((await api.send("DELETE", "/__control/requests")).status, 204);
      assert.equal((await api.send("GET", "/__control/requests")).text, "[]");
    },
  },
  {
    name: "behaviour rules force statuses until their times are used up, after authentication",
    async run(api) {
      const rules = {
        rules: [
          { operation: "listOrders", status: 503, times: 2 },
          { operation: "cancelOrder", status: 409, times: 1 },
        ],
      };
      const put = await api.send("PUT", "/__control/behaviour", { body: rules });
      assert.equal(put.status, 200, put.text);
      assert.ok(validateBehaviour(JSON.parse(put.text)));
      assertError(await list(api, { key: "wrong" }), 401, "unauthorized");
      assertError(await list(api), 503, "simulated_failure");
      assert.deepEqual(JSON.parse((await api.send("GET", "/__control/behaviour")).text), {
        delayMs: 0,
        rules: [
          { operation: "listOrders", status: 503, times: 1 },
          { operation: "cancelOrder", status: 409, times: 1 },
        ],
      });
      assertError(await list(api), 503, "simulated_failure");
      assert.equal((await list(api)).status, 200, "used up");
      assertError(await cancel(api, "2"), 409, "order_not_cancellable", /Forced/);
      assert.equal((await cancel(api, "2")).status, 204, "the forced 409 changed nothing");
    },
  },
  {
    name: "behaviour rules that are not valid: 400 naming the field",
    async run(api) {
      const cases: Array<[unknown, RegExp]> = [
        [
          { rules: [{ operation: "cancelOrder", status: 200 }] },
          /rules\[0\]\.status.*204, 401, 404, 409, 500/,
        ],
        [{ rules: [{ operation: "listOrders" }] }, /exactly one of "status" and "fault"/],
        [{ rules: [{ operation: "listOrders", status: 503, fault: "close" }] }, /exactly one/],
        [{ rules: [{ operation: "cancelOrder", fault: "truncate" }] }, /rules\[0\]\.fault/],
        [{ rules: [{ operation: "getPet", status: 200 }] }, /rules\[0\]\.operation/],
        [{ rules: [{ operation: "listOrders", status: 503, times: 0 }] }, /rules\[0\]\.times/],
        [{ delayMs: 60_001 }, /"delayMs"/],
        [{ delay: 5 }, /"delay": unknown field/],
      ];
      for (const [body, message] of cases) {
        assertError(
          await api.send("PUT", "/__control/behaviour", { body }),
          400,
          "invalid_control_request",
          message,
        );
      }
    },
  },
  {
    name: "Prefer: code forces one answer with a valid body and no state change",
    async run(api) {
      const forced = await cancel(api, "2", { headers: { prefer: "code=409" } });
      assertError(forced, 409, "order_not_cancellable", /Prefer: code=409/);
      assertError(await cancel(api, "2", { headers: { prefer: "code=404" } }), 404, "order_not_found");
      assert.equal((await cancel(api, "1", { headers: { prefer: "code=204" } })).status, 204);
      assertError(await cancel(api, "1"), 409, "order_not_cancellable", /only pending/);
      const failed = await list(api, { headers: { prefer: "code=503" } });
      assertError(failed, 503, "simulated_failure");
      for (const status of [500, 502, 504]) {
        assertError(
          await cancel(api, "2", { headers: { prefer: `code=${status}` } }),
          status,
          "simulated_failure",
        );
      }
      const ok = await list(api, { headers: { prefer: 'code="200"' } });
      assert.equal(ok.status, 200);
      assert.equal(ok.text, (await list(api)).text);
      assertError(await list(api, { headers: { prefer: "code=401" } }), 401, "unauthorized");
      assert.equal((await cancel(api, "2")).status, 204, "order 2 was still pending");
    },
  },
  {
    name: "Prefer never gets around a bad key, and refuses codes the operation cannot answer",
    async run(api) {
      assertError(await list(api, { key: "wrong", headers: { prefer: "code=200" } }), 401, "unauthorized");
      assertError(
        await cancel(api, "2", { key: null, headers: { prefer: "code=204" } }),
        401,
        "unauthorized",
      );
      assertError(
        await list(api, { headers: { prefer: "code=409" } }),
        400,
        "invalid_prefer",
        /200, 401, 500/,
      );
      assertError(await cancel(api, "2", { headers: { prefer: "code=200" } }), 400, "invalid_prefer");
      assertError(await cancel(api, "2", { headers: { prefer: "code=418" } }), 400, "invalid_prefer");
      assertError(await list(api, { headers: { prefer: "code=abc" } }), 400, "invalid_prefer");
      assertError(await list(api, { headers: { prefer: "delay=60001" } }), 400, "invalid_prefer", /60000/);
      assertError(await list(api, { headers: { prefer: "delay=-1" } }), 400, "invalid_prefer");
      assert.equal((await list(api, { headers: { prefer: "return=minimal, respond-async" } })).status, 200);
      assert.equal((await cancel(api, "2")).status, 204, "no refused request changed anything");
    },
  },
  {
    name: "Prefer: delay and the world's delayMs hold the answer back; both combine with a code",
    async run(api) {
      const delayed = await list(api, { headers: { prefer: "code=503, delay=150" } });
      assertError(delayed, 503, "simulated_failure");
      assert.ok(delayed.delayedMs >= 150 - TIMER_SLACK_MS, `held back ${delayed.delayedMs} ms`);
      await api.send("PUT", "/__control/behaviour", { body: { delayMs: WORLD_DELAY_MS } });
      const slow = await list(api);
      assert.equal(slow.status, 200);
      assert.ok(slow.delayedMs >= WORLD_DELAY_MS - TIMER_SLACK_MS, `held back ${slow.delayedMs} ms`);
      // Sent together, a refused request is held less than an accepted one: it reaches no world, so no delay.
      const [accepted, refused] = await Promise.all([list(api), list(api, { key: null })]);
      assert.equal(refused.status, 401);
      assert.ok(
        refused.delayedMs < accepted.delayedMs,
        `refused held ${refused.delayedMs} ms, accepted ${accepted.delayedMs} ms`,
      );
      const quick = await list(api, { headers: { prefer: "delay=0" } });
      assert.ok(quick.delayedMs < WORLD_DELAY_MS, "Prefer wins over the world's delay for its request");
    },
  },
  {
    name: "GET /__control/sessions lists live sessions with their orders and changes",
    async run(api) {
      await cancel(api, "2");
      await api.send("DELETE", "/__control/orders/1");
      const answer = await api.send("GET", "/__control/sessions");
      assert.equal(answer.status, 200);
      const sessions = JSON.parse(answer.text) as Array<{ name: string; orders: number; changes: number }>;
      for (const session of sessions) assert.ok(validateSession(session));
      const mine = sessions.find((session) => session.name === api.session);
      assert.deepEqual(
        { ...mine, lastUsed: undefined },
        { name: api.session, orders: 11, changes: 2, lastUsed: undefined },
      );
    },
  },
  {
    name: "GET /__control/sessions pages by name: after, limit, X-Next-Cursor, Link, X-Total-Count",
    async run(api) {
      const names = ["c", "a", "e", "b", "d"].map((letter) => `${api.session}.${letter}`);
      for (const name of names) await list(api, { headers: { "x-mock-session": name } });
      const seen: string[] = [];
      let after = `${api.session}.`;
      for (;;) {
        const answer = await api.send("GET", `/__control/sessions?limit=2&after=${after}`);
        assert.equal(answer.status, 200, answer.text);
        assert.ok(Number(answer.headers["x-total-count"]) >= names.length);
        const page = (JSON.parse(answer.text) as Array<{ name: string }>).map(({ name }) => name);
        assert.ok(page.length <= 2);
        seen.push(...page.filter((name) => name.startsWith(`${api.session}.`)));
        const next = answer.headers["x-next-cursor"];
        if (next === undefined || !page.every((name) => name.startsWith(`${api.session}.`))) break;
        assert.equal(next, page.at(-1));
        assert.equal(answer.headers.link, `</__control/sessions?after=${next}&limit=2>; rel="next"`);
        after = next;
      }
      assert.deepEqual(seen, [...names].sort(), "each of them once, in name order");
      for (const [query, problem] of [
        ["after=a%20b", /"after": must be a session name/],
        ["limit=0", /"limit": must be a whole number from 1 to 1000/],
        ["limit=1001", /"limit"/],
        ["cursor=1", /"cursor": unknown \(after, limit\)/],
      ] as const) {
        assertError(
          await api.send("GET", `/__control/sessions?${query}`),
          400,
          "invalid_control_request",
          problem,
        );
      }
    },
  },
  {
    name: "a session's changes count the orders that differ from the fixtures, whatever changed them",
    async run(api) {
      const changes = async () => {
        const answer = await api.send("GET", "/__control/sessions");
        const sessions = JSON.parse(answer.text) as Array<{ name: string; changes: number; orders: number }>;
        const mine = sessions.find(({ name }) => name === api.session);
        assert.ok(mine, "the session is listed");
        return { changes: mine.changes, orders: mine.orders };
      };
      const order = { petId: 1, quantity: 1, status: "pending" };
      await api.send("PUT", "/__control/orders/900", { body: order });
      await api.send("PUT", "/__control/orders/900", { body: { ...order, status: "shipped" } });
      assert.deepEqual(await changes(), { changes: 1, orders: 13 }, "an added order, replaced");
      await api.send("DELETE", "/__control/orders/900");
      assert.deepEqual(await changes(), { changes: 0, orders: 12 }, "added then removed: no difference left");
      await api.send("PUT", "/__control/orders/3", { body: { status: "shipped" } });
      await cancel(api, "3");
      await api.send("PUT", "/__control/orders/4", { body: { ...order, status: "shipped" } });
      await api.send("DELETE", "/__control/orders/4");
      await api.send("PUT", "/__control/orders/4", { body: order });
      assert.deepEqual(
        await changes(),
        { changes: 3, orders: 12 },
        "3 changed twice; 4 removed from its place and added again at the end: two",
      );
    },
  },
  {
    name: "X-Mock-Session names outside 1-64 of A-Z a-z 0-9 . _ -: 400 invalid_session",
    async run(api) {
      for (const name of ["", "a b", "x".repeat(65), "ü", "a/b", "a;b"]) {
        assertError(
          await list(api, { headers: { "x-mock-session": name } }),
          400,
          "invalid_session",
          /1 to 64 characters/,
        );
        assertError(
          await api.send("GET", "/__control/orders", { headers: { "x-mock-session": name } }),
          400,
          "invalid_session",
        );
      }
      assert.equal(
        (await list(api, { headers: { "x-mock-session": `A-z.0_${"9".repeat(58)}` } })).status,
        200,
      );
    },
  },
  {
    name: "unknown control paths are 404 and other methods 405 with Allow",
    async run(api) {
      assertError(await api.send("GET", "/__control/nothing"), 404, "not_found");
      const cases: Array<[string, string, string]> = [
        ["DELETE", "/__control/orders", "GET, POST"],
        ["GET", "/__control/reset", "POST"],
        ["PATCH", "/__control/orders/1", "PUT, DELETE"],
        ["POST", "/__control/behaviour", "GET, PUT"],
        ["PUT", "/__control/requests", "GET, DELETE"],
        ["DELETE", "/__control/sessions", "GET"],
      ];
      // Where the dashboard is served (not in-process), its page and files are there to be read.
      if ((await api.send("GET", "/__control/")).status === 200)
        cases.push(["POST", "/__control/", "GET, HEAD"], ["DELETE", "/__control/dashboard.js", "GET, HEAD"]);
      for (const [method, path, allow] of cases) {
        const answer = await api.send(method, path);
        assertError(answer, 405, "method_not_allowed");
        assert.equal(answer.headers.allow, allow);
      }
    },
  },
  {
    name: "CORS lets a page of any origin send X-Mock-Session and Prefer to the API; the control API answers none of them",
    async run(api) {
      const answer = await api.send("OPTIONS", "/v1/store/orders/2", {
        headers: {
          origin: "http://localhost:5173",
          "access-control-request-method": "DELETE",
          "access-control-request-headers": "authorization, x-mock-session, prefer",
        },
      });
      assert.equal(answer.status, 204);
      assert.equal(answer.headers["access-control-allow-origin"], "*");
      assert.match(answer.headers["access-control-allow-headers"] ?? "", /X-Mock-Session/);
      assert.match(answer.headers["access-control-allow-headers"] ?? "", /Prefer/);
      // A page that steered the mock would change what every other client sees: no grant, and a refusal.
      const preflight = await api.send("OPTIONS", "/__control/orders/2", {
        headers: { origin: "http://localhost:5173", "access-control-request-method": "PUT" },
      });
      assert.equal(preflight.headers["access-control-allow-origin"], undefined);
      const simple = await api.send("GET", "/__control/orders", {
        headers: { origin: "http://localhost:5173" },
      });
      assertError(simple, 403, "foreign_origin");
      assert.equal(simple.headers["access-control-allow-origin"], undefined);
    },
  },
];

/** The dashboard's files, which only a mock that serves pages over HTTP has. */
export const DASHBOARD_CASES: ControlCase[] = [
  {
    name: "GET /__control/ serves the dashboard and its files under a same-origin Content-Security-Policy",
    async run(api) {
      for (const [path, type] of [
        ["/__control/", "text/html; charset=utf-8"],
        ["/__control", "text/html; charset=utf-8"],
        ["/__control/dashboard.js", "text/javascript; charset=utf-8"],
        ["/__control/dashboard.css", "text/css; charset=utf-8"],
      ]) {
        const answer = await api.send("GET", path as string);
        assert.equal(answer.status, 200, path);
        assert.equal(answer.headers["content-type"], type);
        assert.match(answer.headers["content-security-policy"] ?? "", /^default-src 'self';/);
        assert.equal(answer.headers["x-content-type-options"], "nosniff");
      }
      assert.match((await api.send("GET", "/__control/")).text, /<title>Petstore mock dashboard<\/title>/);
    },
  },
];

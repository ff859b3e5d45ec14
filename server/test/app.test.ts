import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { parseExact, toSchemaView } from "../../contract/exact-json.ts";
import type { ErrorRecord } from "../../contract/types.ts";
import { ERROR_CODES, type ErrorCode, statusesOf } from "../core/errors.ts";
import { AUTH, bundledApp, contract, DEV_KEY, type ListeningApp } from "./support.ts";

const LIST = "/v1/store/orders";
const cancelPath = (id: string | number | bigint) => `/v1/store/orders/${id}`;
const validateError = contract.schema("Error");
const validateList = contract.validator(
  "#/paths/~1store~1orders/get/responses/200/content/application~1json/schema",
);

function assertErrorRecord(
  response: { statusCode: number; headers: Record<string, unknown>; body: string },
  code: string,
) {
  assert.equal(response.headers["content-type"], "application/json; charset=utf-8");
  const body = JSON.parse(response.body) as ErrorRecord;
  assert.ok(validateError(body), JSON.stringify(validateError.errors));
  assert.equal(body.status, response.statusCode);
  assert.equal(body.code, code);
}

describe("mock HTTP behaviour (Node transport in-process, over real sockets)", () => {
  let app: ListeningApp;
  before(async () => {
    app = await bundledApp();
  });
  after(() => app.close());

  describe("authentication", () => {
    const cases: Array<[string, Record<string, string>, boolean]> = [
      ["no Authorization header", {}, false],
      [
        "the Basic scheme",
        { authorization: `Basic ${Buffer.from(`u:${DEV_KEY}`).toString("base64")}` },
        false,
      ],
      ["an empty bearer token", { authorization: "Bearer " }, false],
      ["the bare scheme name", { authorization: "Bearer" }, false],
      ["an unknown key", { authorization: "Bearer not-a-key" }, true],
      ["a key with a different case", { authorization: `Bearer ${DEV_KEY.toUpperCase()}` }, true],
      ["a key prefix", { authorization: `Bearer ${DEV_KEY.slice(0, -1)}` }, true],
    ];
    for (const [name, headers, tokenGiven] of cases) {
      for (const [method, url] of [
        ["GET", LIST],
        ["DELETE", cancelPath(2)],
        ["DELETE", cancelPath(999)],
      ] as const) {
        it(`${method} ${url} with ${name}: 401 Error record with a Bearer challenge`, async () => {
          const response = await app.inject({ method, url, headers });
          assert.equal(response.statusCode, 401);
          assertErrorRecord(response, "unauthorized");
          const challenge = tokenGiven
            ? 'Bearer realm="petstore", error="invalid_token"'
            : 'Bearer realm="petstore"';
          assert.equal(response.headers["www-authenticate"], challenge);
        });
      }
    }

    it("accepts the scheme name in any case and extra spaces", async () => {
      for (const authorization of [`bearer ${DEV_KEY}`, `BEARER ${DEV_KEY}`, `Bearer   ${DEV_KEY}  `]) {
        const response = await app.inject({ method: "GET", url: LIST, headers: { authorization } });
        assert.equal(response.statusCode, 200, authorization);
      }
    });

    it("refused cancels leave the order pending", async () => {
      const refused = await app.inject({
        method: "DELETE",
        url: cancelPath(3),
        headers: { authorization: "Bearer x" },
      });
      assert.equal(refused.statusCode, 401);
      const accepted = await app.inject({ method: "DELETE", url: cancelPath(3), headers: AUTH });
      assert.equal(accepted.statusCode, 204);
    });
  });

  describe("listOrders", () => {
    it("returns every order in fixture order, Order fields only, valid against openapi.yaml", async () => {
      const response = await app.inject({ method: "GET", url: LIST, headers: AUTH });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers["content-type"], "application/json; charset=utf-8");
      const orders = parseExact(response.body) as Array<Record<string, unknown>>;
      assert.ok(validateList(toSchemaView(orders)), JSON.stringify(validateList.errors));
      assert.deepEqual(
        orders.map((order) => String(order.id)),
        ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "9007199254740993", "9223372036854775807"],
      );
      for (const order of orders) assert.ok(!("status" in order), "status must never be exposed");
      assert.match(response.body, /"id":9007199254740993,"petId":9007199254740995,/);
    });

    it("answers HEAD like GET without a body", async () => {
      const get = await app.inject({ method: "GET", url: LIST, headers: AUTH });
      const head = await app.inject({ method: "HEAD", url: LIST, headers: AUTH });
      assert.equal(head.statusCode, 200);
      assert.equal(head.body, "");
      assert.equal(head.headers["content-type"], get.headers["content-type"]);
      assert.equal(head.headers["content-length"], get.headers["content-length"]);
    });

    it("answers a trailing slash like the plain path", async () => {
      const response = await app.inject({ method: "GET", url: `${LIST}/`, headers: AUTH });
      assert.equal(response.statusCode, 200);
    });
  });

  describe("cancelOrder", () => {
    it("cancels a pending order once: 204 with no body, then 409, and the order stays listed", async () => {
      const first = await app.inject({ method: "DELETE", url: cancelPath(5), headers: AUTH });
      assert.equal(first.statusCode, 204);
      assert.equal(first.body, "");
      assert.equal(first.headers["content-type"], undefined);
      const second = await app.inject({ method: "DELETE", url: cancelPath(5), headers: AUTH });
      assert.equal(second.statusCode, 409);
      assertErrorRecord(second, "order_not_cancellable");
      const list = await app.inject({ method: "GET", url: LIST, headers: AUTH });
      assert.match(list.body, /\{"id":5,"petId":331,/);
    });

    it("cancels an order whose id is above 2^53 exactly, not its neighbour", async () => {
      const neighbour = await app.inject({
        method: "DELETE",
        url: cancelPath("9007199254740992"),
        headers: AUTH,
      });
      assert.equal(neighbour.statusCode, 404);
      const exact = await app.inject({
        method: "DELETE",
        url: cancelPath("9007199254740993"),
        headers: AUTH,
      });
      assert.equal(exact.statusCode, 204);
    });

    it("refuses a shipped order with 409 and leaves it shipped", async () => {
      for (let attempt = 0; attempt < 2; attempt++) {
        const response = await app.inject({ method: "DELETE", url: cancelPath(1), headers: AUTH });
        assert.equal(response.statusCode, 409);
        assertErrorRecord(response, "order_not_cancellable");
      }
      const maxId = await app.inject({
        method: "DELETE",
        url: cancelPath("9223372036854775807"),
        headers: AUTH,
      });
      assert.equal(maxId.statusCode, 409);
    });

    it("answers 404 order_not_found for an unknown id", async () => {
      const response = await app.inject({ method: "DELETE", url: cancelPath(424242), headers: AUTH });
      assert.equal(response.statusCode, 404);
      assertErrorRecord(response, "order_not_found");
    });

    for (const id of [
      "abc",
      "1.5",
      "99999999999999999999",
      "9223372036854775808",
      "-9223372036854775809",
      "+1",
      "1e3",
      "%20",
      "x".repeat(5000),
    ]) {
      it(`answers 404 order_not_found for the non-int64 id ${id.slice(0, 24)}`, async () => {
        const response = await app.inject({ method: "DELETE", url: cancelPath(id), headers: AUTH });
        assert.equal(response.statusCode, 404);
        assertErrorRecord(response, "order_not_found");
      });
    }

    it("reads ids with leading zeros as the same integer", async () => {
      const response = await app.inject({ method: "DELETE", url: cancelPath("0007"), headers: AUTH });
      assert.equal(response.statusCode, 204);
      const again = await app.inject({ method: "DELETE", url: cancelPath(7), headers: AUTH });
      assert.equal(again.statusCode, 409);
    });

    it("ignores a request body", async () => {
      const response = await app.inject({
        method: "DELETE",
        url: cancelPath(8),
        headers: { ...AUTH, "content-type": "application/json" },
        payload: "{not json",
      });
      assert.equal(response.statusCode, 204);
    });

    it("refuses a body over the limit with 413", async () => {
      const response = await app.inject({
        method: "DELETE",
        url: cancelPath(10),
        headers: { ...AUTH, "content-type": "text/plain" },
        payload: "x".repeat(64 * 1024),
      });
      assert.equal(response.statusCode, 413);
      assertErrorRecord(response, "payload_too_large");
    });
  });

  describe("routing", () => {
    it("answers unknown paths with 404 not_found", async () => {
      for (const url of ["/", "/v1", "/v2/store/orders", "/v1/store/orders/1/items", "/v1/pets/1"]) {
        const response = await app.inject({ method: "GET", url, headers: AUTH });
        assert.equal(response.statusCode, 404, url);
        assertErrorRecord(response, "not_found");
      }
    });

    const notAllowed: Array<[string, string, string]> = [
      ["POST", LIST, "GET, HEAD"],
      ["PUT", LIST, "GET, HEAD"],
      ["PATCH", LIST, "GET, HEAD"],
      ["DELETE", LIST, "GET, HEAD"],
      ["GET", cancelPath(2), "DELETE"],
      ["HEAD", cancelPath(2), "DELETE"],
      ["POST", cancelPath(2), "DELETE"],
    ];
    for (const [method, url, allow] of notAllowed) {
      it(`answers ${method} ${url} with 405 and Allow: ${allow}`, async () => {
        const response = await app.inject({ method, url, headers: AUTH });
        assert.equal(response.statusCode, 405);
        assert.equal(response.headers.allow, allow);
        if (method !== "HEAD") assertErrorRecord(response, "method_not_allowed");
      });
    }
  });

  describe("CORS", () => {
    it("answers a preflight without authentication and allows the Authorization header", async () => {
      const response = await app.inject({
        method: "OPTIONS",
        url: cancelPath(2),
        headers: {
          origin: "http://localhost:5173",
          "access-control-request-method": "DELETE",
          "access-control-request-headers": "authorization",
        },
      });
      assert.equal(response.statusCode, 204);
      assert.equal(response.headers["access-control-allow-origin"], "*");
      assert.match(String(response.headers["access-control-allow-headers"]), /Authorization/i);
      assert.match(String(response.headers["access-control-allow-methods"]), /DELETE/);
    });

    it("allows only the configured origins when some are given", async () => {
      const restricted = await bundledApp({ corsOrigins: ["http://localhost:5173"] });
      try {
        const allowed = await restricted.inject({
          method: "GET",
          url: LIST,
          headers: { ...AUTH, origin: "http://localhost:5173" },
        });
        assert.equal(allowed.headers["access-control-allow-origin"], "http://localhost:5173");
        const other = await restricted.inject({
          method: "GET",
          url: LIST,
          headers: { ...AUTH, origin: "http://evil.test" },
        });
        assert.equal(other.headers["access-control-allow-origin"], undefined);
      } finally {
        await restricted.close();
      }
    });
  });

  it("lists every Error code it can send in docs/mock-server.md", () => {
    const readme = readFileSync(new URL("../../docs/mock-server.md", import.meta.url), "utf8");
    for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
      const statuses = statusesOf(code).join(", ");
      assert.match(
        readme,
        new RegExp(`\\| \`${code}\`\\s*\\| ${statuses}\\s*\\|`),
        `${code} (${statuses}) is in the table of docs/mock-server.md`,
      );
    }
  });
});

import assert from "node:assert/strict";
import { assertError, type ControlCase } from "./control-cases.ts";

const BIG_PENDING = "9007199254740993";

/** The API's documented behaviour and its edge cases, run over every transport beside CONTROL_CASES. */
export const API_CASES: ControlCase[] = [
  {
    name: "GET /__health answers 200 with no key and no data; other methods 405",
    async run(api) {
      const health = await api.send("GET", "/__health", { key: null, defaultWorld: true });
      assert.equal(health.status, 200);
      assert.equal(health.text, '{"status":"ok"}');
      assert.equal(health.headers["content-type"], "application/json; charset=utf-8");
      assertError(
        await api.send("POST", "/__health", { key: null, defaultWorld: true }),
        405,
        "method_not_allowed",
      );
    },
  },
  {
    name: "lists every order with ids digit for digit, as JSON with the exact Content-Type",
    async run(api) {
      const answer = await api.send("GET", "/v1/store/orders");
      assert.equal(answer.status, 200);
      assert.equal(answer.headers["content-type"], "application/json; charset=utf-8");
      assert.match(answer.text, /^\[\{"id":1,"petId":101,/);
      assert.match(answer.text, /"id":9007199254740993,/);
      assert.match(answer.text, /"id":9223372036854775807,/);
      assert.doesNotMatch(answer.text, /"status"/);
      assert.equal(answer.headers["access-control-allow-origin"], "*");
    },
  },
  {
    name: "cancels a pending order once (204, no body), then 409; a shipped order is 409; an unknown one 404",
    async run(api) {
      const cancelled = await api.send("DELETE", `/v1/store/orders/${BIG_PENDING}`);
      assert.equal(cancelled.status, 204);
      assert.equal(cancelled.text, "");
      assertError(await api.send("DELETE", `/v1/store/orders/${BIG_PENDING}`), 409, "order_not_cancellable");
      assertError(await api.send("DELETE", "/v1/store/orders/1"), 409, "order_not_cancellable");
      assertError(await api.send("DELETE", "/v1/store/orders/424242"), 404, "order_not_found");
      assert.equal(
        (await api.send("DELETE", "/v1/store/orders/00002")).status,
        204,
        "leading zeros name order 2",
      );
    },
  },
  {
    name: "a missing or wrong key is 401 before anything else, with the Bearer challenge",
    async run(api) {
      const none = assertError(await api.send("GET", "/v1/store/orders", { key: null }), 401, "unauthorized");
      assert.match(none.message, /API key is required/);
      const wrong = await api.send("DELETE", "/v1/store/orders/424242", { key: "wrong" });
      assertError(wrong, 401, "unauthorized");
      assert.equal(wrong.headers["www-authenticate"], 'Bearer realm="petstore", error="invalid_token"');
      assertError(await api.send("DELETE", "/v1/store/orders/2", { key: null }), 401, "unauthorized");
      assert.equal(
        (await api.send("DELETE", "/v1/store/orders/2")).status,
        204,
        "the refused cancel changed nothing",
      );
    },
  },
  {
    name: "ids that are not int64 name no order: 404; malformed percent-encoding is 400",
    async run(api) {
      for (const id of ["abc", "1.5", "-", "%2B1", "9223372036854775808", "9".repeat(100)]) {
        assertError(await api.send("DELETE", `/v1/store/orders/${id}`), 404, "order_not_found");
      }
      assertError(await api.send("DELETE", "/v1/store/orders/%zz"), 400, "bad_request");
    },
  },
  {
    name: "other methods are 405 with Allow, other paths 404, HEAD is GET without a body",
    async run(api) {
      const post = await api.send("POST", "/v1/store/orders");
      assertError(post, 405, "method_not_allowed");
      assert.equal(post.headers.allow, "GET, HEAD");
      const get = await api.send("GET", "/v1/store/orders/2");
      assertError(get, 405, "method_not_allowed");
      assert.equal(get.headers.allow, "DELETE");
      assertError(await api.send("GET", "/v1/pets/1"), 404, "not_found");
      const head = await api.send("HEAD", "/v1/store/orders");
      assert.equal(head.status, 200);
      assert.equal(head.text, "");
      assert.equal(
        (await api.send("GET", "/v1/store/orders/")).status,
        200,
        "a trailing slash is the same path",
      );
    },
  },
];

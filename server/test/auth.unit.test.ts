import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createAuthenticator } from "../core/auth.ts";

describe("authenticator", () => {
  const authenticate = createAuthenticator(["dev-key-123", "second-key", "k3y_+/~.=="]);

  it("accepts every known key, with the scheme name in any case", () => {
    for (const header of [
      "Bearer dev-key-123",
      "bearer second-key",
      "BEARER k3y_+/~.==",
      "\tBearer  dev-key-123 ",
    ]) {
      assert.deepEqual(authenticate(header), { ok: true }, header);
    }
  });

  it("refuses keys that differ in length, case, one byte or by a prefix or suffix", () => {
    for (const token of [
      "dev-key-12",
      "dev-key-1234",
      "DEV-KEY-123",
      "dev-key-124",
      "xdev-key-123",
      "k3y_+/~.=",
      "dev-key-123second-key",
    ]) {
      assert.deepEqual(authenticate(`Bearer ${token}`), { ok: false, tokenGiven: true }, token);
    }
  });

  it("tells a missing token from a wrong one", () => {
    for (const header of [
      undefined,
      "",
      "Bearer",
      "Bearer   ",
      "Basic ZGV2LWtleS0xMjM=",
      "Token dev-key-123",
      "dev-key-123",
      "Bearerdev-key-123",
      "Bearer-dev-key-123",
      "Bearez dev-key-123",
      "Bear",
      "\t \t",
      "Bearer\tdev-key-123",
      "Bearer dev-key-123 second-key",
      "Bearer dev-key-123,",
      "Bearer ключ",
    ]) {
      assert.deepEqual(authenticate(header), { ok: false, tokenGiven: false }, String(header));
    }
  });

  it("accepts nothing when there are no keys", () => {
    assert.deepEqual(createAuthenticator([])("Bearer anything"), { ok: false, tokenGiven: true });
  });
});

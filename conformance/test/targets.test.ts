import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  PENDING_ID,
  RACE_ID,
  SHIPPED_ID,
  startTarget,
  TARGET_KEY,
  type TargetBehaviour,
} from "../../test-support/target-server.ts";
import { runConformance } from "../suite/runner.ts";

/**
 * `withIds`: the run names a pending and a shipped order, and (`race`) another pending one for the race
 * scenario, whose own defects have tests of their own.
 */
async function failedChecks(behaviour: TargetBehaviour, withIds = true, strict = false, race = true) {
  const target = await startTarget(behaviour);
  try {
    const report = await runConformance({
      baseUrl: target.url,
      apiKey: TARGET_KEY,
      ...(withIds ? { pendingOrderId: PENDING_ID, shippedOrderId: SHIPPED_ID } : {}),
      ...(withIds && race ? { raceOrderId: RACE_ID } : {}),
      ...(strict ? { strict: true } : {}),
    });
    return {
      report,
      failed: report.scenarios.flatMap((s) => s.checks.filter((c) => c.status === "failed").map((c) => c.id)),
    };
  } finally {
    await target.close();
  }
}

describe("the suite passes correct servers that make different valid choices", () => {
  // The name, the target, whether the run gets both order ids, and how many checks are skipped.
  const valid: Array<[string, TargetBehaviour, boolean, number?]> = [
    ["the reference target", {}, true],
    ["cancelled orders removed from the list (second cancel 404)", { removeCancelled: true }, true],
    ["409 without a body", { conflictWithoutBody: true }, true],
    ["extra Order fields", { extraFields: true }, true],
    ["orders with only an id", { sparseOrders: true }, true],
    ["an empty store (no ids to cancel)", { emptyStore: true }, false],
    [
      "400 with an Error record for ids that are not int64 (Spring, Fastify, gateways)",
      { badRequestOnMalformedId: true },
      true,
    ],
    [
      "422 with an Error record for ids that are not int64 (FastAPI)",
      { unprocessableOnMalformedId: true },
      true,
    ],
    [
      "400 with an Error record for list parameters it does not define",
      { badRequestOnUnknownQuery: true },
      true,
      1,
    ],
  ];
  for (const [name, behaviour, withIds, skipped = 0] of valid) {
    it(name, async () => {
      const { report, failed } = await failedChecks(behaviour, withIds);
      assert.deepEqual(failed, []);
      assert.ok(report.summary.passed > 40, `only ${report.summary.passed} checks ran`);
      if (withIds) assert.equal(report.summary.skipped, skipped);
    });
  }
});

describe("--strict keeps the reading that only documented statuses answer input the spec has no case for", () => {
  const strictOnly: Array<[string, TargetBehaviour, string[]]> = [
    [
      "400 for ids that are not int64",
      { badRequestOnMalformedId: true },
      ["letters", "fraction", "dash"].map((v) => `cancel-malformed-id.${v}.status`),
    ],
    [
      "422 for ids that are not int64",
      { unprocessableOnMalformedId: true },
      ["letters", "fraction", "dash"].map((v) => `cancel-malformed-id.${v}.status`),
    ],
    [
      "400 for list parameters",
      { badRequestOnUnknownQuery: true },
      ["list-no-paging.with-parameters.status", "list-no-paging.list-ignores-paging-parameters"],
    ],
  ];
  for (const [name, behaviour, expected] of strictOnly) {
    it(`${name}: passes by default, fails with --strict`, async () => {
      assert.deepEqual((await failedChecks(behaviour)).failed, []);
      assert.deepEqual((await failedChecks(behaviour, true, true)).failed.sort(), [...expected].sort());
    });
  }

  it("by default, a 400 for list parameters leaves the paging rule skipped, not passed", async () => {
    const { report } = await failedChecks({ badRequestOnUnknownQuery: true });
    const rule = report.scenarios
      .flatMap((scenario) => scenario.checks)
      .find((check) => check.id === "list-no-paging.list-ignores-paging-parameters");
    assert.equal(rule?.status, "skipped");
  });
});

describe("one defect, reported once", () => {
  it("a bad order in a list read nine times is one failure with one body; the other readings point to it", async () => {
    const { report, failed } = await failedChecks({ quantityAsString: true });
    assert.deepEqual(failed, ["list-orders.list.body"]);
    const checks = report.scenarios.flatMap((scenario) => scenario.checks);
    const withBody = checks.filter((check) => check.response?.body.includes('"quantity":"'));
    assert.equal(withBody.length, 1, withBody.map((check) => check.id).join(", "));
    for (const id of ["list-no-paging.with-parameters.body", "cancel-race.cancel.list-during.body"]) {
      const check = checks.find((each) => each.id === id);
      assert.equal(check?.status, "skipped", id);
      assert.equal(
        check?.message,
        "not judged again: the same list, byte for byte, as list-orders.list.body, which reports it",
      );
    }
  });
});

describe("the suite fails each broken server, naming the right checks", () => {
  const broken: Array<[string, TargetBehaviour, string[]]> = [
    [
      "a list that is not an array (reported once; the state rules that need it are not judged)",
      { listNotArray: true },
      ["list-orders.list.body"],
    ],
    ["a wrong field type", { quantityAsString: true }, ["list-orders.list.body"]],
    ["an exposed status", { statusExposed: true }, ["list-orders.list.no-status-field"]],
    [
      "an id beyond int64 (which it then answers 409 for, where an id that is not int64 names no order)",
      { idBeyondInt64: true },
      ["list-orders.list.body", "cancel-malformed-id.beyond-int64.status"],
    ],
    ["duplicate ids", { duplicateIds: true }, ["list-orders.list.unique-ids"]],
    [
      "a 404 before the 401",
      { lookupBeforeAuth: true },
      ["no-header", "basic-scheme", "empty-token", "unknown-key"].map(
        (v) => `cancel-unauthorized.missing-order.${v}.status`,
      ),
    ],
    [
      "a cancel that changes nothing",
      { cancelWithoutTransition: true },
      ["cancel-pending.cancel-again.status"],
    ],
    ["a shipped order that can be cancelled", { shippedCancellable: true }, ["cancel-shipped.cancel.status"]],
    [
      "a 5xx on a malformed id",
      { serverErrorOnMalformedId: true },
      ["letters", "fraction", "dash"].map((v) => `cancel-malformed-id.${v}.status`),
    ],
    [
      "an undocumented 414 on a long id",
      { uriTooLongOnLongId: true },
      ["cancel-malformed-id.very-long.status"],
    ],
    ["a cancel made by a refused request", { cancelsWhenRefused: true }, ["cancel-pending.cancel.status"]],
    ["pagination of the list", { paginates: true }, ["list-no-paging.list-ignores-paging-parameters"]],
    [
      // The absent id is never a given one: one past the rounded largest would be the pending order itself.
      "ids rounded through doubles",
      { idsThroughDoubles: true },
      ["cancel-pending.pending-order-listed"],
    ],
    [
      "a 409 body that is not an Error record",
      { conflictNonErrorBody: true },
      ["cancel-pending.cancel-again.body", "cancel-shipped.cancel.body", "cancel-shipped.cancel-again.body"],
    ],
    [
      "the Basic scheme accepted",
      { acceptsBasic: true },
      [
        "list-unauthorized.basic-scheme.status",
        ...["missing", "pending", "shipped"].map((o) => `cancel-unauthorized.${o}-order.basic-scheme.status`),
        "cancel-pending.cancel.status",
      ],
    ],
    [
      "any bearer token accepted",
      { acceptsAnyBearer: true },
      [
        "list-unauthorized.unknown-key.status",
        ...["missing", "pending", "shipped"].map((o) => `cancel-unauthorized.${o}-order.unknown-key.status`),
        "cancel-pending.cancel.status",
      ],
    ],
  ];
  for (const [name, behaviour, expected] of broken) {
    it(name, async () => {
      const { report, failed } = await failedChecks(behaviour, true, false, false);
      assert.deepEqual(failed, expected);
      // A defect of the list's body is said once: the reading with parameters, the same bytes, points to it.
      for (const check of report.scenarios.flatMap((s) => s.checks))
        if (check.id.startsWith("list-no-paging.with-parameters.") && check.status === "skipped")
          assert.match(
            check.message,
            /^not judged again: the same list, byte for byte, as list-orders\.list\./,
          );
      assert.equal(report.summary.failed, expected.length);
      for (const check of report.scenarios.flatMap((s) => s.checks).filter((c) => c.status === "failed")) {
        assert.ok(check.spec, `${check.id} names the spec section`);
        assert.ok(check.request, `${check.id} carries the request`);
      }
    });
  }

  // These break every response of a kind, so each failure must be of that kind, and there must be many.
  const sweeping: Array<[string, TargetBehaviour, RegExp, number]> = [
    ["Error records without a message", { errorWithoutMessage: true }, /\.body$/, 26],
    [
      "an Error status that differs from the HTTP status",
      { errorStatusMismatch: true },
      /\.error-status$/,
      26,
    ],
    ["a text Content-Type on JSON bodies", { textContentType: true }, /\.content-type$/, 28],
    ["403 instead of 401", { unauthorizedAs403: true }, /^(list|cancel)-unauthorized\..*\.status$/, 16],
  ];
  for (const [name, behaviour, pattern, count] of sweeping) {
    it(name, async () => {
      const { failed } = await failedChecks(behaviour, true, false, false);
      assert.equal(failed.length, count, failed.join("\n"));
      for (const id of failed) assert.match(id, pattern);
    });
  }

  it("shows what was expected, what came back and where the spec says so", async () => {
    const { report } = await failedChecks({ shippedCancellable: true });
    const check = report.scenarios
      .flatMap((s) => s.checks)
      .find((c) => c.id === "cancel-shipped.cancel.status");
    assert.equal(check?.message, "expected 409, got 204");
    assert.match(check?.spec ?? "", /§3, §4\.2/);
    assert.equal(check?.request?.method, "DELETE");
    assert.equal(check?.request?.path, `/v1/store/orders/${SHIPPED_ID}`);
    assert.equal(check?.request?.headers.authorization, "Bearer ***");
    assert.equal(check?.response?.status, 204);
  });

  it("says what a shipped order's cancels were answered when it is gone after them", async () => {
    const { report } = await failedChecks({ shippedCancellable: true, removeCancelled: true });
    const rule = report.scenarios
      .flatMap((s) => s.checks)
      .find((c) => c.id === "cancel-shipped.shipped-order-unchanged");
    assert.equal(rule?.status, "failed");
    assert.equal(
      rule?.message,
      `order ${SHIPPED_ID} is no longer listed after its cancels, answered 204 and 404`,
    );
  });
});

describe("the suite never cancels an order it was not given", () => {
  it("against a list of string ids, cancels only the given pending order and reports the defect once", async () => {
    const deletes = { segments: [] as string[], cancelled: [] as string[] };
    const { report, failed } = await failedChecks({ stringIds: true, deletes }, true, false, false);
    assert.deepEqual(deletes.cancelled, [PENDING_ID]);
    // Every DELETE named a given order or no int64 at all: with no list read by id, no id is shown absent,
    // and none is guessed (the top of the int64 range is a real order of the bundled fixtures).
    const top = "9223372036854775807";
    const int64 = (segment: string) =>
      /^-?\d{1,19}$/.test(segment) && BigInt(segment) <= BigInt(top) && BigInt(segment) >= -BigInt(top) - 1n;
    for (const segment of deletes.segments)
      assert.ok([PENDING_ID, SHIPPED_ID].includes(segment) || !int64(segment), segment);
    const notFound = report.scenarios.find((scenario) => scenario.id === "cancel-not-found");
    assert.equal(notFound?.status, "skipped");
    assert.match(notFound?.reason ?? "", /^no id was shown absent \(.*\); missingOrderId names one$/);
    assert.ok(report.warnings.some((warning) => /no id was shown absent/.test(warning)));
    // The string ids fail the list's checks; what needs the list read by id is not judged, and not failed.
    assert.ok(failed.length > 0);
    assert.deepEqual(
      failed.filter((id) => !/\.(body|status-not-exposed|ids-unique)$/.test(id) && !/^list-/.test(id)),
      [],
    );
    const skippedRules = report.scenarios.flatMap((scenario) =>
      scenario.checks.filter(
        (check) => check.status === "skipped" && /could not be read by id/.test(check.message),
      ),
    );
    assert.ok(skippedRules.length > 0);
  });

  it("against a server that reads ids leniently (parseInt), no malformed id reaches an order", async () => {
    const deletes = { segments: [] as string[], cancelled: [] as string[] };
    await failedChecks({ lenientIds: true, deletes }, true, false, false);
    assert.deepEqual(
      deletes.cancelled.filter((id) => id !== PENDING_ID),
      [],
      `cancelled ${deletes.cancelled.join(", ")}`,
    );
  });
});

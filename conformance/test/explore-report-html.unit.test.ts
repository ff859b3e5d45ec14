import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderExploreHtml } from "../explore/report-html.ts";
import { RECORDED_ORDER, recordedResult, twoCancelsHistory } from "./explore-recorded-result.ts";

describe("explore's HTML report", () => {
  it("draws where every linearization fails: the failing bars in red with the reason, the points and states", () => {
    const html = renderExploreHtml(recordedResult());
    const svg = html.slice(html.indexOf("<svg"), html.indexOf("</svg>"));
    // Either 204 may be the one that took effect: both are where the longest linearizations stop.
    const failed = svg.match(/<g class="bar involved failed">/g) ?? [];
    assert.equal(failed.length, 2);
    assert.match(
      svg,
      /<title>[^<]*every linearization of A fails here: a 204 though the order was no longer pending/,
    );
    assert.match(svg, /class="reason">✗ A: a 204 though the order was no longer pending</);
    // The list, then one cancel, are linearized: points with the status each leaves.
    assert.equal((svg.match(/<circle [^>]*class="point"/g) ?? []).length, 2);
    assert.match(svg, /● A1 → pending/);
    assert.match(svg, /● A2 → cancelled/);
    assert.match(svg, /<g class="state state-pending">/);
    assert.match(
      svg,
      /<g class="state state-cancelled"><title>A after A2: cancelled \(not pending; listed; a cancel answers 409\)/,
    );
    assert.match(svg, /✗ every linearization fails after A2/);
    assert.match(html, /<ul class="legend"/);
    assert.match(html, /Every linearization fails after 2 of its 3 operations/);
    assert.doesNotMatch(html, /<script/i);
  });

  it("escapes what came from the target and the command line", () => {
    const html = renderExploreHtml(
      recordedResult({ target: 'http://x/v1?<script>alert("x")</script>', warnings: ["<b>\u202eevil"] }),
    );
    assert.doesNotMatch(html, /<script|<b>evil|\u202e/);
    assert.match(html, /&#60;script&#62;alert\(&#34;x&#34;\)/);
  });

  it("says an order was not drawn when it has too many operations", () => {
    const result = recordedResult();
    const history = result.finding?.minimal.history as unknown as { operations: unknown[] };
    const list = history.operations[0];
    history.operations = [...Array.from({ length: 17 }, () => list), ...history.operations.slice(1)];
    const html = renderExploreHtml(result);
    assert.match(html, /not drawn: too many operations to draw \(19, at most 16\)/);
  });

  it("draws an allowed stale list's point where it read, before its bar, the statuses in time order", () => {
    const history = twoCancelsHistory();
    // The first cancel answered at 30 ms; a list sent 2 ms later still showed the order, which cancelled
    // orders leave: a read 2 ms stale, within the 5 ms allowed.
    const staleList = {
      ...history.operations[0],
      sentAt: 32,
      answeredAt: 34,
    } as (typeof history.operations)[number];
    const operations = [
      history.operations[1],
      staleList,
      { ...history.operations[2], sentAt: 40, answeredAt: 41 },
    ];
    const html = renderExploreHtml(
      recordedResult({ allowStaleMs: 5 }, { ...history, operations } as typeof history, [
        { cancelledOrdersListed: false, secondCancelStatus: 409 },
      ]),
    );
    assert.match(html, new RegExp(`order ${RECORDED_ORDER}`));
    const edges = [
      ...html.matchAll(/<g class="state state-\w+"><title>[^<]*<\/title><rect x="([\d.]+)"/g),
    ].map((match) => Number(match[1]));
    assert.equal(edges.length, 3);
    assert.deepEqual(
      edges,
      [...edges].sort((a, b) => a - b),
    );
    assert.match(html, /● A1 → pending/);
    assert.match(html, /✗ A: a 204 though the order was no longer pending/);
  });
});

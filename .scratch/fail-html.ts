import { writeFileSync } from "node:fs";
import { explore } from "../conformance/explore/explore.ts";
import { renderExploreHtml } from "../conformance/explore/report-html.ts";
import { startExploreTarget } from "../test-support/explore-target.ts";

const target = await startExploreTarget({ defect: "check-then-act" });
const result = await explore({
  baseUrl: target.url,
  apiKey: target.key,
  seed: 1,
  clients: 4,
  steps: 5,
  budgetMs: 20000,
  shrinkBudgetMs: 30000,
  replays: 3,
  finalReplays: 5,
  hooks: {
    provision: (_c: unknown, w: { pending: number; shipped: number }) =>
      target.create(Math.min(w.pending, 4), Math.min(w.shipped, 2)),
  },
} as never);
writeFileSync("/work/tmp/shots/explore-fail.html", renderExploreHtml(result as never));
console.log(result.ended, result.finding?.minimal.history.operations.length);
await target.close();

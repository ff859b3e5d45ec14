import { cancelLeavesFields } from "./cancel-leaves-fields.ts";
import { cancelOnce } from "./cancel-once.ts";
import { listedOrdersStay } from "./listed-orders-stay.ts";
import { noCancelAfterConflict } from "./no-cancel-after-conflict.ts";
import { refusalsChangeNothing } from "./refusals-change-nothing.ts";
import { absentOrderUnlisted, cancelAnswerMatchesState, staleRead } from "./story-rules.ts";
import type { TrafficRule, TrafficRuleName } from "./traffic-rule.ts";

/**
 * Every rule the catalogue gives the proxy to judge, as the keeper evaluates it: a rule added to the
 * catalogue for the proxy does not compile until its object is here.
 */
export const TRAFFIC_RULES: { readonly [Name in TrafficRuleName]: TrafficRule<Name> } = {
  "cancel-once": cancelOnce,
  "no-cancel-after-conflict": noCancelAfterConflict,
  "listed-orders-stay": listedOrdersStay,
  "cancel-leaves-fields": cancelLeavesFields,
  "refusals-change-nothing": refusalsChangeNothing,
  "cancel-answer-matches-state": cancelAnswerMatchesState,
  "absent-order-unlisted": absentOrderUnlisted,
  "stale-read": staleRead,
};

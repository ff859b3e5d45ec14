import { HOLDS, type TrafficRule, type TrafficRuleName } from "./traffic-rule.ts";

/**
 * A rule only the spec's model finds in live traffic (live-history.ts): each check of an order's story puts
 * it to the test, and a finding of the model under its name breaks it.
 */
function storyRule<Name extends TrafficRuleName>(name: Name): TrafficRule<Name> {
  return {
    name,
    onStory({ findings }) {
      const found = findings.find((finding) => finding.rule === name);
      return found === undefined
        ? HOLDS
        : { message: found.message, earlier: found.earlier, later: found.later };
    },
  };
}

/** A cancel answers 204, 409 or 404 as the order's state says, in an order the traffic allows. */
export const cancelAnswerMatchesState = storyRule("cancel-answer-matches-state");

/** An order whose cancel said it is absent (404) is not in a list. */
export const absentOrderUnlisted = storyRule("absent-order-unlisted");

/** A list that began after a cancel was answered shows the order as the cancel left it. */
export const staleRead = storyRule("stale-read");

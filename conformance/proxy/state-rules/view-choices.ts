import type { History } from "../../model/history.ts";
import { commonChoices, describeChoices } from "../../model/linearizability.ts";
import { ALL_RUN_CHOICES, type RunChoices } from "../../model/spec-model.ts";
import { checkStory } from "./story-check.ts";
import type { ExchangeRef } from "./traffic-rule.ts";

/**
 * What one view of the store (one deployment behind the proxy) has shown of the spec's open choices:
 * whether cancelled orders stay listed and what a second cancel answers, which the spec lets a deployment
 * decide once, the same way for every order. Each order's story narrows them to the combinations that
 * explain it at any staleness, as explore's histories narrow a run's; a combination ruled out keeps the
 * order and the exchange that ruled it out, so that a finding it explains says where the deployment decided.
 */

/** A combination of the open choices that one order's story could not be explained under, and where. */
export interface ChoiceRuledOut {
  choices: RunChoices;
  orderId: string;
  /** The exchange whose answer the combination cannot explain. */
  at: ExchangeRef;
  /** The combinations left once it was ruled out: what the deployment showed instead. */
  left: readonly RunChoices[];
}

/** What a view's choices cost, roughly, and each combination ruled out beyond its order's id and exchange's label. */
export const VIEW_CHOICES_BYTES = 128;
export const RULED_OUT_BYTES = 96;

export class ViewChoices {
  possible: readonly RunChoices[] = ALL_RUN_CHOICES;
  readonly ruledOut: ChoiceRuledOut[] = [];
  /** What it holds, as charged to the live history's budget. */
  bytes = 0;

  /**
   * Keeps only the combinations that explain the story (`consistent`, of those possible); each one ruled
   * out is returned with the exchange of the story that rules it out, for the caller to charge.
   */
  narrow(
    consistent: readonly RunChoices[],
    orderId: string,
    history: History,
    refs: readonly ExchangeRef[],
  ): ChoiceRuledOut[] {
    const left = commonChoices(this.possible, consistent);
    if (left.length === this.possible.length) return [];
    const ruledOut = this.possible
      .filter((choices) => !left.includes(choices))
      .map((choices) => ({ choices, orderId, at: exchangeRulingOut(choices, orderId, history, refs), left }));
    this.ruledOut.push(...ruledOut);
    this.possible = left;
    return ruledOut;
  }

  /**
   * For a story with findings under the combinations left: the combinations ruled out that explain it
   * whole, with where the deployment showed otherwise, leaving out those this very story ruled out;
   * none when no such combination does.
   */
  shownElsewhere(orderId: string, history: History, refs: readonly ExchangeRef[]): ChoiceRuledOut[] {
    const own = new Set(refs.map((ref) => ref.seq));
    const elsewhere = this.ruledOut.filter((ruled) => ruled.orderId !== orderId || !own.has(ruled.at.seq));
    if (elsewhere.length === 0) return [];
    const verdict = checkStory(
      orderId,
      history,
      elsewhere.map((ruled) => ruled.choices),
    );
    if (!verdict.ok) return [];
    return elsewhere.filter((ruled) => verdict.choices.includes(ruled.choices));
  }
}

/** The last exchange of the story's first violation under `choices` alone: the answer it cannot explain. */
function exchangeRulingOut(
  choices: RunChoices,
  orderId: string,
  history: History,
  refs: readonly ExchangeRef[],
): ExchangeRef {
  const violation = checkStory(orderId, history, [choices]).findings.find(
    (finding) => finding.kind === "violation",
  );
  const index = violation?.operations[violation.operations.length - 1] ?? refs.length - 1;
  return refs[index] as ExchangeRef;
}

/**
 * "this deployment showed cancelled orders stay listed for order 5 at exchange #7 …", once per order and
 * exchange: what the deployment showed where it ruled combinations out.
 */
export function describeShownElsewhere(ruledOut: readonly ChoiceRuledOut[]): string {
  const byExchange = new Map<string, ChoiceRuledOut[]>();
  for (const ruled of ruledOut) {
    const key = `${ruled.orderId}\n${ruled.at.seq}`;
    const group = byExchange.get(key);
    if (group) group.push(ruled);
    else byExchange.set(key, [ruled]);
  }
  return [...byExchange.values()]
    .map((group) => {
      const { orderId, at, left } = group[group.length - 1] as ChoiceRuledOut;
      const shown = shownInstead(
        group.map((ruled) => ruled.choices),
        left,
      );
      return `this deployment showed ${shown} for order ${orderId} at exchange ${at.label}`;
    })
    .join("; ");
}

/** How every combination left differs from every one ruled out, in the spec's words. */
function shownInstead(ruled: readonly RunChoices[], left: readonly RunChoices[]): string {
  const shown: string[] = [];
  const listedRuled = new Set(ruled.map((choices) => choices.cancelledOrdersListed));
  const secondRuled = new Set(ruled.map((choices) => choices.secondCancelStatus));
  if (listedRuled.size === 1 && left.every((choices) => !listedRuled.has(choices.cancelledOrdersListed)))
    shown.push(listedRuled.has(true) ? "cancelled orders leave the list" : "cancelled orders stay listed");
  if (secondRuled.size === 1 && left.every((choices) => !secondRuled.has(choices.secondCancelStatus)))
    shown.push(`a second cancel answers ${secondRuled.has(409) ? 404 : 409}`);
  return shown.length > 0 ? shown.join(" and ") : left.map(describeChoices).join(" or ");
}

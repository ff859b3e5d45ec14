import type { components } from "./openapi.generated.ts";

/** The Order record as openapi.yaml defines it on the wire. */
export type Order = components["schemas"]["Order"];
/** The Error record as openapi.yaml defines it on the wire. */
export type ErrorRecord = components["schemas"]["Error"];

/** Order with its integer fields held exactly, for values that must survive beyond 2^53. */
export type ExactOrder = {
  [Field in keyof Order]: NonNullable<Order[Field]> extends number ? bigint : Order[Field];
};

import type { components as control } from "./control.generated.ts";

/** The control API's records, as control.openapi.yaml defines them on the wire. */
export type ControlOrder = control["schemas"]["ControlOrder"];
export type Behaviour = control["schemas"]["Behaviour"];
export type BehaviourRule = control["schemas"]["BehaviourRule"];
export type JournalEntry = control["schemas"]["JournalEntry"];
export type SessionSummary = control["schemas"]["SessionSummary"];
export type OperationId = BehaviourRule["operation"];

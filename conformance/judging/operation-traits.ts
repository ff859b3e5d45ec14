import type { Operation } from "../../contract/operations.ts";

/**
 * The judge's one table of what differs by operation: which operation lists the store and which cancels
 * an order, and the parameter that names the order. The suite, the proxy and explore read operations
 * through it, never by their names. The mock keeps a table of its own (server/core/api.ts), on purpose.
 */
export const OPERATION_TRAITS = {
  listOrders: { kind: "list" },
  cancelOrder: { kind: "cancel", orderIdParameter: "orderId" },
} as const satisfies Record<string, OperationTrait>;

interface OperationTrait {
  /** What the operation does to the store, as the state rules read it. */
  kind: "list" | "cancel";
  /** The path parameter that carries the order's id. */
  orderIdParameter?: string;
}

export type OperationName = keyof typeof OPERATION_TRAITS;
export type OperationKind = OperationTrait["kind"];

/** The traits of a contract operation; undefined for one the judge has no reading of. */
export function traitsOf(operation: Pick<Operation, "operationId">): OperationTrait | undefined {
  return (OPERATION_TRAITS as Record<string, OperationTrait>)[operation.operationId];
}

export function isListOperation(operation: Pick<Operation, "operationId">): boolean {
  return traitsOf(operation)?.kind === "list";
}

export function isCancelOperation(operation: Pick<Operation, "operationId">): boolean {
  return traitsOf(operation)?.kind === "cancel";
}

/** The contract's operation of a kind: the one list, the one cancel. */
export function operationOfKind(operations: ReadonlyMap<string, Operation>, kind: OperationKind): Operation {
  for (const operation of operations.values()) if (traitsOf(operation)?.kind === kind) return operation;
  throw new Error(
    `the contract has no operation that ${kind === "list" ? "lists orders" : "cancels an order"}`,
  );
}

/** The raw (percent-encoded) segment naming the order, for an operation that names one. */
export function orderIdSegment(
  operation: Operation,
  params: Readonly<Record<string, string>>,
): string | undefined {
  const parameter = traitsOf(operation)?.orderIdParameter;
  return parameter === undefined ? undefined : params[parameter];
}

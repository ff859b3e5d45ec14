import type { ValidateFunction } from "ajv";
import { BODY_FIELDS, type Contract, escapePointer, type ResponseObject } from "./contract.ts";

const JSON_MEDIA_TYPE = "application/json";

/**
 * The path segment of the interface version (§9.1) that every base address ends with; operations' paths
 * are relative to it. The one place the version prefix is written (a test holds openapi.yaml's servers to it).
 */
export const VERSION_PREFIX = "/v1";

export interface DocumentedResponse {
  status: number;
  description: string;
  /** The body's validator, when openapi.yaml gives the response a JSON body. */
  body?: ValidateFunction;
  /** The body may be left out (declared under `x-optional-content`); when present, `body` checks it. */
  bodyOptional: boolean;
}

export interface Operation {
  operationId: string;
  method: string;
  /** The path template relative to the base address, e.g. `/store/orders/{orderId}`. */
  path: string;
  responses: Map<number, DocumentedResponse>;
}

/** Every operation of openapi.yaml with its documented responses, read from the document itself. */
export function readOperations(contract: Contract): Map<string, Operation> {
  const operations = new Map<string, Operation>();
  for (const [path, item] of Object.entries(contract.document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const responses = new Map<number, DocumentedResponse>();
      for (const [status, declared] of Object.entries(operation.responses)) {
        const { response, pointer } = resolveResponse(contract, declared, [
          "#/paths",
          escapePointer(path),
          method,
          "responses",
          status,
        ]);
        const bodyField = BODY_FIELDS.find((field) => response[field]?.[JSON_MEDIA_TYPE] !== undefined);
        responses.set(Number(status), {
          status: Number(status),
          description: response.description,
          bodyOptional: bodyField === "x-optional-content",
          ...(bodyField
            ? { body: contract.validator(`${pointer}/${bodyField}/${escapePointer(JSON_MEDIA_TYPE)}/schema`) }
            : {}),
        });
      }
      operations.set(operation.operationId, {
        operationId: operation.operationId,
        method: method.toUpperCase(),
        path,
        responses,
      });
    }
  }
  return operations;
}

function resolveResponse(
  contract: Contract,
  declared: ResponseObject | { $ref: string },
  pointerSegments: string[],
): { response: ResponseObject; pointer: string } {
  if ("$ref" in declared) {
    const name = declared.$ref.replace("#/components/responses/", "");
    const response = contract.document.components.responses[name];
    if (!response) throw new Error(`openapi.yaml: unresolved response ${declared.$ref}`);
    return { response, pointer: declared.$ref };
  }
  return { response: declared, pointer: pointerSegments.join("/") };
}

/** A request matched to an operation: its path parameters as the raw (percent-encoded) segments sent. */
export interface Routed {
  operation: Operation;
  params: Record<string, string>;
}

/**
 * The one routing of requests to the contract's operations, built from the documents' path templates: a
 * `{name}` template segment takes any one non-empty segment. Undefined for a path or method no operation
 * has. Adding an operation to openapi.yaml adds it here.
 */
export function createRouter(
  operations: ReadonlyMap<string, Operation>,
): (method: string, path: string) => Routed | undefined {
  const routes = [...operations.values()].map((operation) => {
    const names: string[] = [];
    const pattern = operation.path
      .split("/")
      .map((segment) => {
        const parameter = /^\{(.+)\}$/.exec(segment);
        if (!parameter) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        names.push(parameter[1] as string);
        return "([^/]+)";
      })
      .join("/");
    return { operation, names, pattern: new RegExp(`^${pattern}$`) };
  });
  return (method, path) => {
    for (const { operation, names, pattern } of routes) {
      if (operation.method !== method) continue;
      const match = pattern.exec(path);
      if (match)
        return {
          operation,
          params: Object.fromEntries(names.map((name, index) => [name, match[index + 1] as string])),
        };
    }
    return undefined;
  };
}

/** An operation's path with its parameters filled in, each percent-encoded as one segment. */
export function pathOf(operation: Operation, params: Record<string, string> = {}): string {
  return operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ""));
}

/**
 * The operation a request under the version prefix is for: `target` is the request's path (and query) as
 * received, whatever comes before the prefix taken off by the caller. Undefined outside the prefix or for
 * a path and method no operation has.
 */
export function createVersionedRouter(
  operations: ReadonlyMap<string, Operation>,
): (method: string, target: string) => Routed | undefined {
  const route = createRouter(operations);
  return (method, target) => {
    const path = target.split(/[?#]/, 1)[0] ?? "";
    if (!path.startsWith(`${VERSION_PREFIX}/`)) return undefined;
    return route(method, path.slice(VERSION_PREFIX.length));
  };
}

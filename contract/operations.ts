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

/**
 * How a request's path spelled the operation it was routed to: as the template itself (`exact`); as the
 * same URI by RFC 3986 §6.2.2 (`equivalent`: percent-encoded unreserved characters, hex digits' case,
 * dot segments), which is the operation; or as a `variant` the contract does not have but routers commonly
 * serve as the route (trailing or repeated slashes, `;` parameters on a segment, a dot segment spelled with
 * them, the letter case of a literal segment, a backslash for a slash, a `.json` suffix).
 */
export type Spelling = "exact" | "equivalent" | "variant";

/** A request matched to an operation: its path parameters as the raw (percent-encoded) segments sent. */
export interface Routed {
  operation: Operation;
  /**
   * Each parameter's segment, percent-encoded, in RFC 3986's normal form, without `;` parameters or a
   * `.json` suffix.
   */
  params: Record<string, string>;
  spelling: Spelling;
  /** What differs from the template's own spelling, in words ("trailing slash"); absent when exact. */
  differs?: string;
}

/** What a spelling can differ by, in the words reports use. */
const DIFFERS = {
  backslash: "backslash for slash",
  unreserved: "percent-encoded unreserved characters",
  hexCase: "lower-case percent-encoding",
  dots: "dot segments",
  trailing: "trailing slash",
  repeated: "repeated slashes",
  parameters: "; parameters",
  letterCase: "letter case",
  suffix: ".json suffix",
} as const;

/** The format suffix Rails and Spring MVC (up to 5.2) serve as the route it ends. */
const FORMAT_SUFFIX = ".json";

/** The differences RFC 3986 §6.2.2 makes no difference: the same URI. */
const EQUIVALENT: ReadonlySet<string> = new Set([DIFFERS.unreserved, DIFFERS.hexCase, DIFFERS.dots]);

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

interface Route {
  operation: Operation;
  names: string[];
  /** The template's own spelling: a parameter takes a segment already in normal form, with no `;`. */
  exact: RegExp;
  /** Each segment: a literal, or (undefined) a parameter. */
  segments: Array<string | undefined>;
}

function compileRoute(operation: Operation, prefix: string): Route {
  const names: string[] = [];
  const segments: Array<string | undefined> = [];
  const pattern = `${prefix}${operation.path}`
    .split("/")
    .map((segment, index) => {
      const parameter = /^\{(.+)\}$/.exec(segment);
      if (index > 0) segments.push(parameter ? undefined : segment);
      if (!parameter) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      names.push(parameter[1] as string);
      // Not a dot segment, nothing to normalize or strip: any other segment is read by `spelledRoute`.
      return "(?!\\.\\.?(?:/|$))([^/;%\\\\]+)";
    })
    .join("/");
  return { operation, names, exact: new RegExp(`^${pattern}$`), segments };
}

/**
 * The one routing of requests to the contract's operations, built from the documents' path templates: a
 * `{name}` template segment takes any one non-empty segment. The template's own spelling is tried first;
 * then the path is read as RFC 3986 §6.2.2 normalizes it, and for the variants routers commonly serve as
 * the route (see `Spelling`). Undefined for a path or method no operation has, in any of these spellings.
 * `prefix` is a path every route starts with. Adding an operation to openapi.yaml adds it here.
 */
export function createRouter(
  operations: ReadonlyMap<string, Operation>,
  prefix = "",
): (method: string, path: string) => Routed | undefined {
  const routes = [...operations.values()].map((operation) => compileRoute(operation, prefix));
  return (method, path) => {
    // `/store/orders/3.json` is order 3 as the servers that serve the suffix read it, not an id `3.json`.
    if (path.endsWith(FORMAT_SUFFIX)) return spelledRoute(routes, method, path);
    for (const route of routes) {
      if (route.operation.method !== method) continue;
      const match = route.exact.exec(path);
      if (!match) continue;
      const params: Record<string, string> = {};
      route.names.forEach((name, index) => {
        params[name] = match[index + 1] as string;
      });
      return { operation: route.operation, params, spelling: "exact" };
    }
    return spelledRoute(routes, method, path);
  };
}

/** The route a path spells other than exactly, if any, with what differs. */
function spelledRoute(routes: readonly Route[], method: string, path: string): Routed | undefined {
  if (!path.startsWith("/") && !path.startsWith("\\")) return undefined;
  // A method no operation has (a CORS preflight) is no operation however the path is spelled.
  if (!routes.some((route) => route.operation.method === method)) return undefined;
  const differences = new Set<string>();
  const segments = spelledSegments(path, differences);
  if (segments === undefined) return undefined;
  for (const route of routes) {
    if (route.operation.method !== method) continue;
    const params = matchSegments(route, segments, differences);
    if (params === undefined) continue;
    const differs = [...differences];
    if (differs.length === 0) return { operation: route.operation, params, spelling: "exact" };
    const spelling = differs.every((each) => EQUIVALENT.has(each)) ? "equivalent" : "variant";
    return { operation: route.operation, params, spelling, differs: differs.join(", ") };
  }
  return undefined;
}

/**
 * A path's non-empty segments as routers commonly read it: backslashes as slashes, RFC 3986's normal form
 * (§6.2.2), no `;` parameters, no `.json` suffix and no empty segments. A segment's parameters go before its
 * dots are read, as Tomcat and Jetty read them: `x/..;/orders` is `orders` there, and a `..` spelled so
 * names no segment any server serves. What each step changed goes in `differences`.
 */
function spelledSegments(path: string, differences: Set<string>): string[] | undefined {
  let text = path;
  if (text.includes("\\")) {
    text = text.replaceAll("\\", "/");
    differences.add(DIFFERS.backslash);
  }
  if (text.includes("%")) text = normalPercentEncoding(text, differences);
  const bare = text
    .split("/")
    .slice(1)
    .map((segment) => {
      const semicolon = segment.indexOf(";");
      if (semicolon === -1) return segment;
      differences.add(DIFFERS.parameters);
      return segment.slice(0, semicolon);
    });
  const resolved = withoutDotSegments(bare, differences);
  if (resolved === undefined) return undefined;
  const last = resolved.length - 1;
  const end = resolved[last] ?? "";
  if (end.length > FORMAT_SUFFIX.length && end.endsWith(FORMAT_SUFFIX)) {
    resolved[last] = end.slice(0, -FORMAT_SUFFIX.length);
    differences.add(DIFFERS.suffix);
  }
  const filled = resolved.filter((segment) => segment !== "");
  if (filled.length === resolved.length) return filled;
  // Empty segments after the last filled one are a trailing slash; any before it, repeated slashes.
  let trailing = 0;
  while (resolved[resolved.length - 1 - trailing] === "") trailing++;
  if (trailing > 0) differences.add(DIFFERS.trailing);
  if (resolved.length - filled.length > trailing) differences.add(DIFFERS.repeated);
  return filled;
}

/** §6.2.2.1 and §6.2.2.2: an unreserved character's percent-encoding decoded, other hex digits upper case. */
function normalPercentEncoding(text: string, differences: Set<string>): string {
  return text.replace(/%[0-9A-Fa-f]{2}/g, (encoded) => {
    const character = String.fromCharCode(Number.parseInt(encoded.slice(1), 16));
    if (UNRESERVED.test(character)) {
      differences.add(DIFFERS.unreserved);
      return character;
    }
    const upper = encoded.toUpperCase();
    if (upper !== encoded) differences.add(DIFFERS.hexCase);
    return upper;
  });
}

/**
 * §6.2.2.3: the segments after RFC 3986's remove_dot_segments (§5.2.4); undefined for a `..` above the
 * root, which RFC 3986 drops but an upstream under a base path of its own resolves above that base.
 */
function withoutDotSegments(segments: readonly string[], differences: Set<string>): string[] | undefined {
  const kept: string[] = [];
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index] as string;
    if (segment !== "." && segment !== "..") {
      kept.push(segment);
      continue;
    }
    differences.add(DIFFERS.dots);
    if (segment === ".." && kept.pop() === undefined) return undefined;
    // A dot segment last leaves the path ending in a slash: `/a/b/.` is `/a/b/`.
    if (index === segments.length - 1) kept.push("");
  }
  return kept;
}

/** The parameters when the segments spell the route, literal segments in any ASCII letter case. */
function matchSegments(
  route: Route,
  segments: readonly string[],
  differences: Set<string>,
): Record<string, string> | undefined {
  if (segments.length !== route.segments.length) return undefined;
  const params: Record<string, string> = {};
  let caseDiffers = false;
  let named = 0;
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index] as string;
    const literal = route.segments[index];
    if (literal === undefined) params[route.names[named++] as string] = segment;
    else if (segment !== literal) {
      // ASCII only: Unicode case mapping folds other letters (the Kelvin sign) onto ASCII ones.
      if (!/^[\x20-\x7e]*$/.test(segment) || segment.toLowerCase() !== literal.toLowerCase())
        return undefined;
      caseDiffers = true;
    }
  }
  if (caseDiffers) differences.add(DIFFERS.letterCase);
  return params;
}

/** An operation's path with its parameters filled in, each percent-encoded as one segment. */
export function pathOf(operation: Operation, params: Record<string, string> = {}): string {
  return operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ""));
}

/**
 * The operation a request under the version prefix is for: `target` is the request's path (and query) as
 * received, whatever comes before the prefix taken off by the caller. The prefix is spelled as any literal
 * segment may be (see `createRouter`). Undefined outside the prefix or for a path and method no operation
 * has. The last path's routing is kept: clients poll one path.
 */
export function createVersionedRouter(
  operations: ReadonlyMap<string, Operation>,
): (method: string, target: string) => Routed | undefined {
  const route = createRouter(operations, VERSION_PREFIX);
  let last: { method: string; path: string; routed: Routed | undefined } = {
    method: "",
    path: "",
    routed: undefined,
  };
  return (method, target) => {
    const end = target.search(/[?#]/);
    const path = end === -1 ? target : target.slice(0, end);
    if (path !== last.path || method !== last.method) last = { method, path, routed: route(method, path) };
    return last.routed;
  };
}

import { type Operation, VERSION_PREFIX } from "../../../contract/operations.ts";

/**
 * Path prefixes whose writes never touch orders (`--not-orders PATH`): another API sharing the proxy, whose
 * writes would otherwise each be a barrier (barrier.ts). A prefix covers a path segment by segment
 * (`/v1/pets` covers `/v1/pets` and `/v1/pets/7`, never `/v1/petsx`), and never covers a path the
 * contract routes: one that would is refused at start. A path that an upstream may read as another one
 * (a backslash, an encoded slash, `;` parameters, a `..` above the root) is covered by none, so that
 * doubt always leaves a barrier.
 */

/** A prefix the option cannot take; the message is one line, naming the value. */
export class NotOrdersPathError extends Error {
  override name = "NotOrdersPathError";
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
// RFC 3986 pchar but `;` (whose parameters routers strip) and `%`, which must start a percent-encoding.
const PREFIX_CHARACTERS = /^[A-Za-z0-9\-._~!$&'()*+,=:@/%]*$/;
const FORMAT_SUFFIX = ".json";

/** A path's segments in RFC 3986's normal form; undefined when an upstream may read it as another path. */
function normalSegments(path: string): string[] | undefined {
  if (!path.startsWith("/") || /[\\;]|%2F|%5C/i.test(path)) return undefined;
  const text = path.replace(/%[0-9A-Fa-f]{2}/g, (encoded) => {
    const character = String.fromCharCode(Number.parseInt(encoded.slice(1), 16));
    return UNRESERVED.test(character) ? character : encoded.toUpperCase();
  });
  const kept: string[] = [];
  for (const segment of text.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment !== "..") kept.push(segment);
    else if (kept.pop() === undefined) return undefined;
  }
  return kept;
}

/** One `--not-orders` value read into its segments, or the reason it cannot be taken. */
export function parseNotOrdersPrefix(value: string): string[] {
  const refuse = (why: string) => new NotOrdersPathError(`${JSON.stringify(value)}: ${why}`);
  if (!value.startsWith("/")) return thrown(refuse("a path prefix begins with /"));
  if (/[?#]/.test(value)) return thrown(refuse("a path prefix has no query or fragment"));
  if (!PREFIX_CHARACTERS.test(value) || /%(?![0-9A-Fa-f]{2})/.test(value))
    return thrown(refuse("a path prefix is written as a URL path is sent, other characters percent-encoded"));
  if (/%2F|%5C/i.test(value)) return thrown(refuse("a path prefix has no encoded slash or backslash"));
  const segments = normalSegments(value);
  if (segments === undefined || value.split("/").some((segment) => /^(\.|%2e){1,2}$/i.test(segment)))
    return thrown(refuse("a path prefix has no . or .. segment"));
  return segments;
}

function thrown(error: Error): never {
  throw error;
}

/** Each operation's path under the contract's prefix, segment by segment: a literal, or (undefined) a parameter. */
function routeSegments(operations: ReadonlyMap<string, Operation>): Array<{
  operation: Operation;
  segments: Array<string | undefined>;
}> {
  return [...operations.values()].map((operation) => ({
    operation,
    segments: `${VERSION_PREFIX}${operation.path}`
      .split("/")
      .slice(1)
      .map((segment) => (/^\{.+\}$/.test(segment) ? undefined : segment)),
  }));
}

/**
 * Whether a prefix's segment may be read as a route's: any segment fills a parameter, and routers read a
 * literal in any letter case and with a `.json` suffix.
 */
function mayBeRead(segment: string, literal: string | undefined): boolean {
  if (literal === undefined) return true;
  const lower = segment.toLowerCase();
  return lower === literal.toLowerCase() || lower === `${literal.toLowerCase()}${FORMAT_SUFFIX}`;
}

export class NotOrdersPaths {
  readonly #prefixes: ReadonlyArray<readonly string[]>;

  /**
   * `values`: the option's values; `operations`: the contract's, none of whose paths a prefix may cover.
   * `name` is how the setting is named in the one-line error.
   */
  constructor(values: readonly string[], operations: ReadonlyMap<string, Operation>, name: string) {
    const routes = routeSegments(operations);
    this.#prefixes = values.map((value) => {
      let segments: string[];
      try {
        segments = parseNotOrdersPrefix(value);
      } catch (error) {
        throw new NotOrdersPathError(`${name} ${(error as Error).message}`);
      }
      const covered = routes.find(
        (route) =>
          segments.length <= route.segments.length &&
          segments.every((segment, index) => mayBeRead(segment, route.segments[index])),
      );
      if (covered !== undefined) {
        const { method, path } = covered.operation;
        throw new NotOrdersPathError(
          `${name} ${JSON.stringify(value)} covers ${method} ${VERSION_PREFIX}${path}, an operation of the contract: name only the paths of another API`,
        );
      }
      return segments;
    });
  }

  get size(): number {
    return this.#prefixes.length;
  }

  /** Whether a request's target (a path, its query and fragment ignored) is under one of the prefixes. */
  covers(target: string): boolean {
    if (this.#prefixes.length === 0) return false;
    const end = target.search(/[?#]/);
    const segments = normalSegments(end === -1 ? target : target.slice(0, end));
    if (segments === undefined) return false;
    return this.#prefixes.some(
      (prefix) =>
        prefix.length <= segments.length && prefix.every((segment, index) => segments[index] === segment),
    );
  }
}

/** No prefix: every write outside the contract stays a barrier. */
export const NO_NOT_ORDERS_PATHS = new NotOrdersPaths([], new Map(), "");

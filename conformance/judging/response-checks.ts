import type { ValidateFunction } from "ajv";
import { formatBytes } from "../../common/byte-size.ts";
import { notUtf8 } from "../../common/utf8.ts";
import { Utf8Stream } from "../../common/utf8-stream.ts";
import { isJsonNumber, isRecord, numberText, parseExact } from "../../contract/exact-json.ts";
import { validateExact } from "../../contract/exact-validate.ts";
import type { FlatRecordPlan } from "../../contract/flat-record.ts";
import { JsonStream, JsonStreamError } from "../../contract/json-stream.ts";
import type { DocumentedResponse, Operation } from "../../contract/operations.ts";
import { type Exchange, recordResponse } from "../judging/exchange.ts";
import type { CheckResult } from "../reports/report.ts";
import {
  judgeListBody,
  type ListVerdict,
  type ProblemTally,
  type ReaderLimits,
  rootNotArray,
} from "./list-judge.ts";
import { isListOperation } from "./operation-traits.ts";
import { RUN_OPTION_NAMES, type SettingNames } from "./setting-names.ts";

const JSON_CONTENT_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

export interface CheckedResponse {
  checks: CheckResult[];
  status?: number;
  /** The body parsed exactly (numbers as their source digits), when it was JSON and not a list. */
  body?: unknown;
  /** A listOrders 200 body, judged order by order. */
  list?: ListVerdict;
}

/** Validators the checks need beyond the operation's own. */
export interface RecordValidators {
  /** The Error record's, for expected 4xx statuses that openapi.yaml does not document. */
  errorRecord?: ValidateFunction;
  /** The Order record's, for lists judged order by order. */
  orderRecord?: ValidateFunction;
  /** The Order schema's plan for flat orders, judged from their bytes. */
  orderPlan?: FlatRecordPlan | undefined;
  /** Lists of at most this many orders keep every record, for checks that compare them (the proxy's). */
  keepRecordsUpTo?: number;
  /** The reader's bounds on a list judged whole (--max-depth, --max-string, --max-number). */
  readerLimits?: ReaderLimits;
  /** How the caller names its settings in messages (default: runConformance's options). */
  names?: SettingNames;
}

// Failures shown in full in one check's message; the rest are counted.
const PROBLEMS_SHOWN = 5;

/** The checks of one response as they are made: each names its kind under the response's check id. */
class CheckList {
  readonly checks: CheckResult[] = [];
  /** A list's failure shows the bytes around its first fault, not the list's first bytes. */
  excerpt: ListVerdict["excerpt"];

  constructor(
    private readonly checkId: string,
    private readonly exchange: Exchange,
    /** How the caller names its settings, for messages that say which one to change. */
    readonly names: SettingNames,
  ) {}

  pass = (kind: string, message: string, spec?: string) => this.#add("passed", kind, message, spec);
  /** Skipped because a limit kept it from being judged whole. */
  notJudged = (kind: string, message: string, spec?: string) =>
    this.#add("skipped", kind, message, spec, { notJudged: true });
  fail = (kind: string, message: string, spec?: string) => {
    const { request, response } = this.exchange;
    this.#add("failed", kind, message, spec, {
      request,
      ...(response ? { response: shownResponse(response, this.excerpt) } : {}),
    });
  };

  #add(
    status: CheckResult["status"],
    kind: string,
    message: string,
    spec: string | undefined,
    evidence: Partial<CheckResult> = {},
  ) {
    this.checks.push({
      id: `${this.checkId}.${kind}`,
      status,
      message,
      ...(spec ? { spec } : {}),
      ...evidence,
    });
  }
}

type Response = NonNullable<Exchange["response"]>;

/**
 * The checks every response must pass: the expected status, documented for the operation and never 5xx;
 * a JSON Content-Type on JSON bodies; the body valid against openapi.yaml; an Error record's status equal to
 * the HTTP status; no body on 204; and for lists, unique ids and no status field.
 */
export function checkResponse(
  exchange: Exchange,
  operation: Operation,
  expected: readonly number[],
  because: string,
  checkId: string,
  validators: RecordValidators = {},
): CheckedResponse {
  const list = new CheckList(checkId, exchange, validators.names ?? RUN_OPTION_NAMES);
  const { response } = exchange;
  if (!response) {
    // The run's own --deadline ended it: the spec sets no time, so that is no failure of the target.
    if (exchange.limit === "deadline")
      list.notJudged(
        "status",
        `not judged: no answer came within the run's limit (${exchange.error}); raise ${list.names.deadline} to judge it`,
        because,
      );
    else
      list.fail(
        "status",
        `expected ${expected.join(" or ")}, but no response came back: ${exchange.error}`,
        because,
      );
    return { checks: list.checks };
  }
  const { status } = response;
  const documented = documentedResponse(operation, status, expected, validators.errorRecord);
  checkStatus(list, exchange, operation, expected, because, documented);
  if (!documented || status >= 500) return { checks: list.checks, status };
  const body = checkBody(list, exchange, operation, documented, validators);
  return { checks: list.checks, status, ...body };
}

/** What openapi.yaml says of a status, or, for an expected 4xx it does not document, an Error record. */
function documentedResponse(
  operation: Operation,
  status: number,
  expected: readonly number[],
  errorRecord: ValidateFunction | undefined,
): (DocumentedResponse & { tolerated?: true }) | undefined {
  const documented = operation.responses.get(status);
  if (documented) return documented;
  // An expected 4xx that openapi.yaml does not document: the lenient reading of input the spec has no case for.
  const tolerable = expected.includes(status) && status >= 400 && status < 500 && errorRecord;
  return tolerable
    ? { status, description: "tolerated", body: errorRecord, bodyOptional: true, tolerated: true }
    : undefined;
}

function checkStatus(
  list: CheckList,
  exchange: Exchange,
  operation: Operation,
  expected: readonly number[],
  because: string,
  documented: DocumentedResponse | undefined,
): void {
  const status = exchange.response?.status as number;
  const problem =
    status >= 500
      ? "a 5xx is never an acceptable answer"
      : status === 429
        ? `the target kept answering 429 Too Many Requests${exchange.retries ? ` after ${exchange.retries} retries` : ""}: slow the run down with ${list.names.concurrency} 1 or a larger ${list.names.maxRetryWait}`
        : !documented
          ? `openapi.yaml does not document ${status} for ${operation.operationId} (documented: ${[...operation.responses.keys()].join(", ")})`
          : undefined;
  if (expected.includes(status) && !problem) list.pass("status", `${status} as expected`, because);
  else
    list.fail(
      "status",
      `expected ${expected.join(" or ")}, got ${status}${problem ? `: ${problem}` : ""}`,
      because,
    );
}

/** The body's checks: none on 204, JSON with a JSON Content-Type, valid against openapi.yaml. */
function checkBody(
  list: CheckList,
  exchange: Exchange,
  operation: Operation,
  documented: DocumentedResponse & { tolerated?: true },
  validators: RecordValidators,
): Omit<CheckedResponse, "checks" | "status"> {
  const response = exchange.response as Response;
  const { status } = response;
  // An answer read in its start only is judged on what that start proves, past its head's checks.
  const startOnly = response.startOnly === true && status !== 204;
  if (response.cut !== undefined && !startOnly) {
    checkCutBody(list, exchange, documented);
    return {};
  }
  if (status === 204) {
    checkNoBody(list, response);
    return {};
  }
  const validate = documented.body;
  if (!validate) return {};
  if (documented.bodyOptional && response.body.length === 0) {
    if (documented.tolerated)
      list.pass(
        "body",
        `${status} without a body`,
        "§7: error responses that carry a body use the Error record",
      );
    else
      list.pass(
        "body",
        `${status} without a body, which openapi.yaml allows (x-optional-content)`,
        "§4.2, §7: the spec does not show this body; error responses that carry one use the Error record",
      );
    return {};
  }
  checkContentType(list, response);
  const schemaSpec =
    status === 200
      ? "§2 Order, §4.1: a JSON array of Order records"
      : "§2 Error, §7: error responses use the Error record";
  if (startOnly) return checkStart(list, response, validate, schemaSpec);
  if (status === 200 && isListOperation(operation) && validators.orderRecord)
    return checkList(list, response, validate, schemaSpec, validators);
  return checkJson(list, response, validate, schemaSpec);
}

/**
 * HTTP reads a 204 as ending with its head (RFC 9112 §6.3), so no client sees the body a server sends
 * after one: its head announcing a body is what shows it.
 */
function checkNoBody(list: CheckList, response: Response): void {
  const rule = "§4.2: 204 body: none";
  const announced = announcedBody(response.headers);
  if (response.body.length > 0)
    list.fail(
      "no-body",
      `204 must carry no body, got ${response.received ?? response.body.length} bytes`,
      rule,
    );
  else if (announced !== undefined)
    list.fail(
      "no-body",
      `204 must carry no body, yet its head announces one (${announced.header}: ${announced.value}), which ${announced.rfc} forbids on a 204`,
      rule,
    );
  else list.pass("no-body", "204 carries no body", rule);
}

function announcedBody(
  headers: Record<string, string>,
): { header: string; value: string; rfc: string } | undefined {
  const length = headers["content-length"];
  if (length !== undefined && length.trim() !== "0")
    return { header: "content-length", value: length, rfc: "RFC 9110 §8.6" };
  const coding = headers["transfer-encoding"];
  return coding === undefined
    ? undefined
    : { header: "transfer-encoding", value: coding, rfc: "RFC 9112 §6.1" };
}

function checkContentType(list: CheckList, response: Response): void {
  const contentType = response.headers["content-type"] ?? "";
  const jsonPayloads = "§1, §7: successful and error payloads are JSON";
  const named = mediaTypesNamed(contentType);
  // One media type repeated with other parameters (`application/json; charset=utf-8`, `application/json`)
  // is still one: a browser reads it so (Fetch's "extract a MIME type").
  const essences = new Set(named.map((type) => (type.split(";")[0] ?? "").trim().toLowerCase()));
  if (essences.size > 1)
    list.fail(
      "content-type",
      `a JSON body needs one JSON Content-Type, got ${named.length} media types (${named.map((type) => `"${type}"`).join(", ")}): Content-Type carries one (RFC 9110 §8.3), so the body's media type is unknown`,
      jsonPayloads,
    );
  else if (JSON_CONTENT_TYPE.test(named[0] ?? ""))
    list.pass("content-type", `JSON Content-Type (${contentType})`, jsonPayloads);
  else
    list.fail(
      "content-type",
      `a JSON body needs a JSON Content-Type, got ${contentType ? `"${contentType}"` : "none"}`,
      jsonPayloads,
    );
}

/**
 * The distinct media types a Content-Type value names: one, or several when repeated lines were combined
 * with commas (RFC 9110 §5.3), the same one repeated counting once. A comma inside a quoted parameter value
 * separates nothing.
 */
export function mediaTypesNamed(value: string): string[] {
  const named = new Map<string, string>();
  const add = (type: string) => {
    const trimmed = type.trim();
    if (trimmed !== "" && !named.has(trimmed.toLowerCase())) named.set(trimmed.toLowerCase(), trimmed);
  };
  let quoted = false;
  let from = 0;
  for (let at = 0; at < value.length; at++) {
    const char = value[at];
    if (quoted && char === "\\") at++;
    else if (char === '"') quoted = !quoted;
    else if (char === "," && !quoted) {
      add(value.slice(from, at));
      from = at + 1;
    }
  }
  add(value.slice(from));
  return [...named.values()];
}

/** A listOrders 200: judged order by order (or taken as the stream already judged it). */
function checkList(
  list: CheckList,
  response: Response,
  validate: ValidateFunction,
  schemaSpec: string,
  validators: RecordValidators,
): Omit<CheckedResponse, "checks" | "status"> {
  const verdict =
    response.list ??
    judgeListBody(response.bodyBytes ?? Buffer.from(response.body, "utf8"), {
      validateOrder: validators.orderRecord as ValidateFunction,
      orderPlan: validators.orderPlan,
      ...(validators.keepRecordsUpTo !== undefined ? { keepRecordsUpTo: validators.keepRecordsUpTo } : {}),
      ...validators.readerLimits,
    });
  list.excerpt = verdict.excerpt;
  if (verdict.limit !== undefined) {
    list.notJudged("body", `not judged: ${limitText(verdict.limit, list.names)}`, schemaSpec);
    return { list: verdict };
  }
  if (verdict.syntax !== undefined) {
    list.fail("body", `the body is not valid JSON: ${verdict.syntax}`, schemaSpec);
    return {};
  }
  if (verdict.notArray) {
    // Not an array: the operation's own schema says what it is instead.
    validateExact(validate, verdict.notArray.value);
    list.fail("body", `does not match openapi.yaml: ${schemaProblems(validate)}`, schemaSpec);
    return {};
  }
  // A list judged in part: what was found in its start stands; nothing is said of the whole.
  const inPart = verdict.partial === undefined ? "" : ` (judged in part: ${verdict.partial})`;
  if (verdict.invalid.count > 0)
    list.fail(
      "body",
      `does not match openapi.yaml: ${tallyText(verdict.invalid, "orders", verdict.count)}${inPart}`,
      schemaSpec,
    );
  else if (verdict.partial !== undefined)
    list.notJudged(
      "body",
      `not judged whole: ${verdict.partial}, and none of them breaks the Order schema`,
      schemaSpec,
    );
  else list.pass("body", `an array of ${verdict.count} Order records`, schemaSpec);
  checkListInvariants(verdict, list);
  return { list: verdict };
}

/**
 * A body that did not arrive whole: its head's Content-Type is judged all the same. The spec sets no size
 * limit and no time, so a body past the run's own --max-body or --deadline is not judged, never failed; a
 * 204 carries no body at all, so one long enough to reach a limit fails all the same. A body this tool
 * could not read (a coding it does not know) says nothing of the target either. A body the target broke
 * off fails.
 */
function checkCutBody(list: CheckList, exchange: Exchange, documented: DocumentedResponse): void {
  const response = exchange.response as Response;
  const payloads = "§1, §7: successful and error payloads are JSON";
  if (response.status === 204) {
    list.fail("no-body", response.cut as string, payloads);
    return;
  }
  if (documented.body) checkContentType(list, response);
  const raise = exchange.limit === "deadline" ? `; raise ${list.names.deadline} to judge it` : "";
  if (exchange.limit !== undefined) list.notJudged("body", `not judged: ${response.cut}${raise}`, payloads);
  else list.fail("body", response.cut as string, payloads);
}

/**
 * An answer that is no list, read only in its start (the spec sets no size limit, so its size is no
 * failure): failed for what the start already proves (not UTF-8, not JSON, a value of a kind the schema
 * refuses), else not judged, which a gate does not pass.
 */
function checkStart(
  list: CheckList,
  response: Response,
  validate: ValidateFunction,
  schemaSpec: string,
): Omit<CheckedResponse, "checks" | "status"> {
  const start = response.bodyBytes ?? Buffer.from(response.body, "utf8");
  const proof = startProof(start, validate);
  if (proof !== undefined)
    list.fail("body", `${proof} (judged on its first ${start.length} bytes: ${response.cut})`, schemaSpec);
  else
    list.notJudged(
      "body",
      `not judged: ${response.cut}; its first ${start.length} bytes break nothing the spec says, and no setting reads more of such an answer`,
      schemaSpec,
    );
  return {};
}

/** What the start of a body proves wrong with it, whatever follows: undefined when it proves nothing. */
function startProof(start: Uint8Array, validate: ValidateFunction): string | undefined {
  const notText = new Utf8Stream().write(start);
  if (notText !== -1) return `the body is not valid JSON: ${notUtf8(notText, start[notText])}`;
  const reader = new JsonStream({ onElement: () => {} });
  try {
    reader.write(start);
  } catch (error) {
    if (!(error instanceof JsonStreamError)) throw error;
    // Past a bound of the reader, the text may well be JSON.
    return error.limit === undefined ? `the body is not valid JSON: ${error.message}` : undefined;
  }
  const first = reader.rootFirstByte;
  // An object may yet be anything its schema asks; another kind of value is that kind however it ends.
  if (first === undefined || first === 0x7b) return undefined;
  const standIn = first === 0x5b ? [] : rootNotArray(first).notArray?.value;
  if (validateExact(validate, standIn)) return undefined;
  return `does not match openapi.yaml: ${schemaProblems(validate)}`;
}

/** Any other JSON body: parsed exactly, validated, and an Error record's status compared with the HTTP one. */
function checkJson(
  list: CheckList,
  response: Response,
  validate: ValidateFunction,
  schemaSpec: string,
): Omit<CheckedResponse, "checks" | "status"> {
  if (response.notUtf8 !== undefined) {
    list.fail("body", `the body is not valid JSON: ${response.notUtf8}`, schemaSpec);
    return {};
  }
  let body: unknown;
  try {
    body = parseExact(response.body);
  } catch (error) {
    list.fail("body", `the body is not valid JSON: ${(error as Error).message}`, schemaSpec);
    return {};
  }
  const { status } = response;
  if (validateExact(validate, body))
    list.pass("body", status === 200 ? "an array of Order records" : "an Error record", schemaSpec);
  else list.fail("body", `does not match openapi.yaml: ${schemaProblems(validate)}`, schemaSpec);

  if (status !== 200 && isRecord(body) && "status" in body) {
    const errorStatus = isJsonNumber(body.status) ? numberText(body.status) : JSON.stringify(body.status);
    const rule = "§7: the Error record's status equals the HTTP status";
    if (errorStatus === String(status))
      list.pass("error-status", `Error status ${errorStatus} equals the HTTP status`, rule);
    else list.fail("error-status", `Error status is ${errorStatus}, HTTP status is ${status}`, rule);
  }
  return { body };
}

function schemaProblems(validate: ValidateFunction): string {
  const problems = (validate.errors ?? []).map(
    (error) => `${error.instancePath || "(body)"} ${error.message}`,
  );
  return [...new Set(problems)].slice(0, PROBLEMS_SHOWN).join("; ");
}

/** The first problems in full, and how many there are in all. */
function tallyText(tally: ProblemTally, what: string, of: number): string {
  const shown = tally.first.slice(0, PROBLEMS_SHOWN).join("; ");
  return tally.count > PROBLEMS_SHOWN ? `${shown}; … ${tally.count} of ${of} ${what} in all` : shown;
}

function checkListInvariants(list: ListVerdict, checks: CheckList): void {
  const { pass, fail, notJudged, names } = checks;
  const unique = "§2: id is the unique order identifier";
  if (list.indexLimit !== undefined && list.duplicates.count === 0)
    notJudged(
      "unique-ids",
      `not judged: the list has more orders than the ${list.indexLimit} whose ids the suite keeps within ${names.maxMemory}; no id was repeated among those`,
      unique,
    );
  else if (list.partial !== undefined && list.duplicates.count === 0)
    notJudged("unique-ids", `not judged whole: ${list.partial}, and no id was repeated among them`, unique);
  else if (list.duplicates.count === 0) pass("unique-ids", `${list.orders.size} distinct ids`, unique);
  else {
    const more =
      list.duplicates.count > list.duplicates.first.length ? ` (${list.duplicates.count} ids in all)` : "";
    fail("unique-ids", `ids listed more than once: ${list.duplicates.first.join(", ")}${more}`, unique);
  }
  const noStatus = "§2: the Order record has no field that carries a status";
  if (list.partial !== undefined && list.exposingStatus.count === 0)
    notJudged(
      "no-status-field",
      `not judged whole: ${list.partial}, and none of them exposes a status`,
      noStatus,
    );
  else if (list.exposingStatus.count === 0) pass("no-status-field", "no Order exposes a status", noStatus);
  else {
    const more =
      list.exposingStatus.count > list.exposingStatus.first.length
        ? ` (${list.exposingStatus.count} orders in all)`
        : "";
    fail(
      "no-status-field",
      `orders expose a status field: ids ${list.exposingStatus.first.join(", ")}${more}`,
      noStatus,
    );
  }
}

/** A bound of the judge's reader that a body went past, with the flag that raises it. */
export function limitText(limit: NonNullable<ListVerdict["limit"]>, names: SettingNames): string {
  const bound =
    limit.what === "depth"
      ? [`${limit.bound} levels of nesting`, names.maxDepth]
      : limit.what === "string"
        ? [`strings of ${formatBytes(limit.bound)}`, names.maxString]
        : [`numbers of ${limit.bound} characters`, names.maxNumber];
  return `the body goes past the judge's limit of ${bound[0]} at byte ${limit.offset}, a bound of this reader and not of JSON (${bound[1]} raises it)`;
}

function shownResponse(response: Exchange["response"] & object, excerpt: ListVerdict["excerpt"]) {
  const recorded = recordResponse(response);
  if (excerpt === undefined) return recorded;
  const through = excerpt.from + Buffer.byteLength(excerpt.text);
  const of = response.received !== undefined ? ` of ${response.received}` : "";
  return {
    ...recorded,
    body: `… bytes ${excerpt.from}–${through}${of}, from the first order at fault:\n${excerpt.text}…`,
  };
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * A small backend of the API for explore's tests, independent of the mock: correct by default, or with one
 * defect that only concurrency shows, each a realistic mechanism.
 */
export type ExploreDefect =
  /** The cancel reads the status, awaits a database round trip, then writes: two cancels both see pending. */
  | "check-then-act"
  /** Lists are read from a replica 50–150 ms behind the primary. */
  | "replica-lag"
  /** A cache-aside list: a list that read before a cancel refills the cache the cancel had just emptied. */
  | "stale-list-cache"
  /** A cache of cancel verdicts keyed by Number(id): ids that differ only beyond 2^53 share an entry. */
  | "number-id-cache"
  /** The list is built from LIMIT/OFFSET pages read apart: a cancel between two pages shifts the next. */
  | "shifted-pages";

export interface ExploreTargetOptions {
  defect?: ExploreDefect;
  /** Cancelled orders leave the list (a valid choice); they stay by default. */
  removeCancelled?: boolean;
  /** Each record carries the API key in a field of its own, as a careless backend might echo it. */
  echoKey?: boolean;
  /** Sends a 100 Continue before every answer, which HTTP lets a server do and a client must skip. */
  continueFirst?: boolean;
  /** Lists after this many get their head and first byte, then nothing more: answers that never complete. */
  stallListsAfter?: number;
  /** Where new ids start: past 2^53 by default, so that ids stay exact only if read as digits. */
  firstId?: bigint;
  /** Whether the nth list served (from 1) ends with an order that has no id, `{}`, which no field requires. */
  idlessOrderInList?: (n: number) => boolean;
  /** The status the nth list served (from 1) answers, an error record its body when not 200. */
  listStatus?: (n: number) => number;
  /** Retry-After of a list answered 429: an HTTP date far off asks the client to come back in years. */
  retryAfter?: string;
}

export interface ExploreTarget {
  readonly url: string;
  readonly key: string;
  /** New orders, as explore's provision hook gives them. */
  create(pending: number, shipped: number): { pending: string[]; shipped: string[] };
  /** The id of every DELETE that reached it, as sent. */
  readonly deletes: readonly string[];
  close(): Promise<void>;
}

type Status = "pending" | "shipped" | "cancelled";

interface Row {
  id: string;
  record: string;
  status: Status;
}

const KEY = "explore-key";
const PAGE_SIZE = 2;
const ROUND_TRIP_PAGES = 6;

export async function startExploreTarget(options: ExploreTargetOptions = {}): Promise<ExploreTarget> {
  const store = new Store(options);
  const server: Server = createServer((request, response) => {
    store.handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    key: KEY,
    create: (pending, shipped) => store.create(pending, shipped),
    deletes: store.deletes,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

class Store {
  readonly deletes: string[] = [];
  readonly #rows = new Map<string, Row>();
  /** Every change with its instant, for the replica that replays them late. */
  readonly #log: { at: number; id: string; status: Status }[] = [];
  #nextId: bigint;
  #listCache: Row[] | undefined;
  #listsServed = 0;
  #listsAnswered = 0;
  readonly #verdicts = new Map<number, number>();

  constructor(private readonly options: ExploreTargetOptions) {
    this.#nextId = options.firstId ?? 2n ** 60n;
  }

  create(pending: number, shipped: number): { pending: string[]; shipped: string[] } {
    const make = (status: Status) => {
      const id = (this.#nextId++).toString();
      const record = `{"id":${id},"petId":7,"quantity":1,"shipDate":"2026-01-01T00:00:00.000Z","complete":${status === "shipped"}${this.options.echoKey ? `,"note":"${KEY}"` : ""}}`;
      this.#rows.set(id, { id, record, status });
      this.#log.push({ at: performance.now() - 10_000, id, status });
      this.#listCache = undefined;
      return id;
    };
    return {
      pending: Array.from({ length: pending }, () => make("pending")),
      shipped: Array.from({ length: shipped }, () => make("shipped")),
    };
  }

  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (this.options.continueFirst) response.writeContinue();
    if (request.headers.authorization !== `Bearer ${KEY}`)
      return error(response, 401, "unauthorized", "Missing or invalid API key.");
    const path = (request.url ?? "").split("?")[0] ?? "";
    if (request.method === "GET" && path === "/v1/store/orders") {
      const stallAfter = this.options.stallListsAfter;
      if (stallAfter !== undefined && ++this.#listsServed > stallAfter) {
        response.writeHead(200, { "content-type": "application/json" }).write("[");
        return;
      }
      return this.#list(response);
    }
    const match = /^\/v1\/store\/orders\/(-?\d{1,19})$/.exec(path);
    if (request.method === "DELETE" && match) {
      this.deletes.push(match[1] as string);
      return this.#cancel(BigInt(match[1] as string).toString(), response);
    }
    return error(response, 404, "not_found", "No such resource.");
  }

  async #cancel(id: string, response: ServerResponse): Promise<void> {
    const defect = this.options.defect;
    if (defect === "number-id-cache") {
      const cached = this.#verdicts.get(Number(id));
      if (cached !== undefined) return answerCancel(response, cached);
    }
    const row = this.#rows.get(id);
    if (row === undefined) return answerCancel(response, 404);
    if (defect === "check-then-act") {
      const seen = row.status;
      await sleep(1 + Math.random() * 4);
      if (seen !== "pending") return answerCancel(response, 409);
    } else if (row.status !== "pending") return answerCancel(response, 409);
    this.#change(row, "cancelled");
    if (defect === "number-id-cache") this.#verdicts.set(Number(id), 409);
    return answerCancel(response, 204);
  }

  #change(row: Row, status: Status): void {
    row.status = status;
    this.#log.push({ at: performance.now(), id: row.id, status });
    this.#listCache = undefined;
  }

  async #list(response: ServerResponse): Promise<void> {
    const n = ++this.#listsAnswered;
    const status = this.options.listStatus?.(n) ?? 200;
    if (status === 429 && this.options.retryAfter !== undefined)
      response.setHeader("retry-after", this.options.retryAfter);
    if (status !== 200) return error(response, status, "unavailable", "The list is not available.");
    const rows = await this.#listedRows();
    const idless = this.options.idlessOrderInList?.(n) ? ["{}"] : [];
    const body = `[${[...rows.map((row) => row.record), ...idless].join(",")}]`;
    response.writeHead(200, { "content-type": "application/json" });
    response.end(body);
  }

  async #listedRows(): Promise<Row[]> {
    const defect = this.options.defect;
    if (defect === "replica-lag") return this.#replicaRows(50 + Math.random() * 100);
    if (defect === "shifted-pages") return this.#pagedRows();
    if (defect === "stale-list-cache") {
      if (this.#listCache) return this.#listCache;
      const read = this.#visible();
      await sleep(1 + Math.random() * 6);
      this.#listCache = read;
      return read;
    }
    return this.#visible();
  }

  #shows(status: Status): boolean {
    return !(this.options.removeCancelled && status === "cancelled");
  }

  #visible(): Row[] {
    return [...this.#rows.values()].filter((row) => this.#shows(row.status)).map((row) => ({ ...row }));
  }

  /** The rows as a replica `lagMs` behind has them: the log replayed up to then. */
  #replicaRows(lagMs: number): Row[] {
    const until = performance.now() - lagMs;
    const statuses = new Map<string, Status>();
    for (const entry of this.#log) if (entry.at <= until) statuses.set(entry.id, entry.status);
    return [...this.#rows.values()].filter((row) => {
      const status = statuses.get(row.id);
      return status !== undefined && this.#shows(status);
    });
  }

  /**
   * SELECT … ORDER BY id DESC LIMIT 2 OFFSET n, page after page: the newest orders' pages each a round trip
   * of its own, during which other requests are served; the older rest read in one go.
   */
  async #pagedRows(): Promise<Row[]> {
    const rows: Row[] = [];
    const pagedRows = ROUND_TRIP_PAGES * PAGE_SIZE;
    for (let offset = 0; offset < pagedRows; offset += PAGE_SIZE) {
      const page = this.#visible()
        .reverse()
        .slice(offset, offset + PAGE_SIZE);
      rows.push(...page);
      if (page.length < PAGE_SIZE) return rows;
      await sleep(1);
    }
    // One read for the rest, not a page each: a store that grows over a run would make every list quadratic.
    rows.push(...this.#visible().reverse().slice(pagedRows));
    return rows;
  }
}

function answerCancel(response: ServerResponse, status: number): void {
  if (status === 204) {
    response.writeHead(204);
    response.end();
  } else if (status === 404) error(response, 404, "not_found", "Order not found.");
  else error(response, 409, "conflict", "Order cannot be cancelled.");
}

function error(response: ServerResponse, status: number, code: string, message: string): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify({ code, message, status }));
}

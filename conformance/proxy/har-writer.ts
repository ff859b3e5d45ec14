import { WholeFile } from "../../common/whole-file.ts";

/** One exchange as HAR 1.2 describes it (http://www.softwareishard.com/blog/har-12-spec/). */
export interface HarEntry {
  startedDateTime: string;
  time: number;
  request: {
    method: string;
    url: string;
    httpVersion: string;
    cookies: [];
    headers: Array<{ name: string; value: string }>;
    queryString: Array<{ name: string; value: string }>;
    postData?: { mimeType: string; text: string };
    headersSize: -1;
    bodySize: number;
  };
  response: {
    status: number;
    statusText: string;
    httpVersion: string;
    cookies: [];
    headers: Array<{ name: string; value: string }>;
    content: { size: number; mimeType: string; text?: string; encoding?: "base64" };
    redirectURL: string;
    headersSize: -1;
    bodySize: number;
  };
  cache: Record<string, never>;
  timings: { send: number; wait: number; receive: number };
  comment?: string;
}

const CLOSING = "\n]}}\n";

/**
 * A HAR file written as the traffic goes, so that a long run keeps nothing in memory: under a temporary
 * name beside its target, valid JSON after every entry (each is written over the closing brackets, which
 * follow it again), copied under its name at each `flush` and renamed into place when the run ends, so
 * that the target only ever holds a whole file. A write that fails (a full disk, a file too large) ends
 * the HAR, never the proxy: `onProblem` is told why, once, the entries written whole are kept, and the
 * ones after it are not written.
 */
export class HarWriter {
  #file: WholeFile | undefined;
  #entries = 0;
  #flushed = 0;
  #flushing: Promise<void> = Promise.resolve();
  #flushFailed = false;

  constructor(
    readonly path: string,
    creator: { name: string; version: string },
    /** Told once, when the HAR can no longer be written. */
    readonly onProblem: (problem: string) => void = () => {},
  ) {
    this.#attempt(() => {
      this.#file = new WholeFile(path);
      this.#file.write(`{"log":{"version":"1.2","creator":${JSON.stringify(creator)},"pages":[],"entries":[`);
      this.#file.writeAhead(CLOSING);
    });
  }

  add(entry: HarEntry): void {
    const file = this.#file;
    if (file === undefined) return;
    // Made before anything is written: an entry that cannot be made throws to its caller, and the HAR goes on.
    const text = `${this.#entries === 0 ? "" : ","}\n${JSON.stringify(entry)}`;
    this.#attempt(() => {
      file.write(text);
      file.writeAhead(CLOSING);
      this.#entries++;
    });
  }

  /**
   * The entries so far under the HAR's name, whole, while the writing goes on; nothing new, nothing done.
   * A copy that fails is said once and tried again at the next flush: the HAR itself goes on.
   */
  flush(): Promise<void> {
    const file = this.#file;
    if (file === undefined || this.#flushed === this.#entries) return this.#flushing;
    this.#flushed = this.#entries;
    this.#flushing = file.publishCopy(CLOSING).catch((error: NodeJS.ErrnoException) => {
      if (this.#flushFailed) return;
      this.#flushFailed = true;
      this.onProblem(
        `cannot copy the HAR to ${this.path} while the proxy runs: ${error.code ?? error.message}`,
      );
    });
    return this.#flushing;
  }

  /** Waits for a copy under way, then puts the whole HAR in place. */
  async close(): Promise<void> {
    await this.#flushing;
    const file = this.#file;
    if (file !== undefined) this.#attempt(() => file.commit());
    this.#file = undefined;
  }

  #attempt(write: () => void): void {
    try {
      write();
    } catch (error) {
      const file = this.#file;
      this.#file = undefined;
      // What was written whole is kept: the HAR ends after the last entry that fit.
      try {
        file?.cutAtEnd(CLOSING);
        file?.commit();
      } catch {
        try {
          file?.abandon();
        } catch {
          // The temporary file may be gone already; what matters is said below.
        }
      }
      this.onProblem(
        `cannot write the HAR ${this.path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}; it ends with the exchanges written before`,
      );
    }
  }
}

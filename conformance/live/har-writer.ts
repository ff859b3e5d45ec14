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
 * follow it again), and renamed into place when the run ends, so that the target only ever holds a whole
 * file.
 */
export class HarWriter {
  readonly #file: WholeFile;
  #entries = 0;

  constructor(path: string, creator: { name: string; version: string }) {
    this.#file = new WholeFile(path);
    this.#file.write(`{"log":{"version":"1.2","creator":${JSON.stringify(creator)},"pages":[],"entries":[`);
    this.#file.writeAhead(CLOSING);
  }

  add(entry: HarEntry): void {
    this.#file.write(`${this.#entries === 0 ? "" : ","}\n${JSON.stringify(entry)}`);
    this.#file.writeAhead(CLOSING);
    this.#entries++;
  }

  close(): void {
    this.#file.commit();
  }
}

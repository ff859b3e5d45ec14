import { closeSync, openSync, writeSync } from "node:fs";

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
 * A HAR file written as the traffic goes, so that a long run keeps nothing in memory and the file is
 * valid JSON after every entry: each entry is written over the closing brackets, which follow it again.
 */
export class HarWriter {
  readonly #fd: number;
  #position: number;
  #entries = 0;

  constructor(path: string, creator: { name: string; version: string }) {
    this.#fd = openSync(path, "w");
    const head = `{"log":{"version":"1.2","creator":${JSON.stringify(creator)},"pages":[],"entries":[`;
    this.#position = writeSync(this.#fd, head, 0);
    writeSync(this.#fd, CLOSING, this.#position);
  }

  add(entry: HarEntry): void {
    const text = `${this.#entries === 0 ? "" : ","}\n${JSON.stringify(entry)}`;
    this.#position += writeSync(this.#fd, text, this.#position);
    writeSync(this.#fd, CLOSING, this.#position);
    this.#entries++;
  }

  close(): void {
    closeSync(this.#fd);
  }
}

import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { Utf8Stream } from "../common/utf8-stream.ts";
import type { Contract } from "../contract/contract.ts";
import { Int64Index } from "../contract/int64-index.ts";
import { JsonStream, JsonStreamError } from "../contract/json-stream.ts";
import { FixtureError, OrdersReader, readDocument, throwProblems } from "./core/fixture.ts";
import { MAX_LIST_BYTES, type Seed, SeedBuilder } from "./core/seed.ts";

export { type Fixture, FixtureError, parseFixture } from "./core/fixture.ts";

const CHUNK_BYTES = 1024 * 1024;

/** A fixture file read and checked: its API keys and the seed its worlds start from (its orders). */
export interface LoadedFixture {
  apiKeys: string[];
  seed: Seed;
}

/**
 * A fixture file read as a stream, a mebibyte at a time: each order is checked and stored as it arrives,
 * with the same messages as a whole-text read (file, order, field), so a file of any size loads in memory
 * in proportion to its orders, and the event loop is free between chunks (a --watch reload keeps serving
 * the old world until the new one is ready). Only regular files are read: a device or a pipe never ends.
 */
export async function loadFixtureFile(path: string, contract: Contract): Promise<LoadedFixture> {
  let handle: FileHandle;
  try {
    // Non-blocking, so that opening a FIFO with no writer does not hang before it is refused.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new FixtureError(
      `${path}: cannot read the fixture file (${(error as NodeJS.ErrnoException).code ?? error})`,
    );
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new FixtureError(`${path}: not a regular file`);
    if (stat.size > MAX_LIST_BYTES) {
      throw new FixtureError(
        `${path}: ${stat.size} bytes, larger than the ${MAX_LIST_BYTES / 1024 ** 3} GiB list one answer can hold`,
      );
    }
    return await readStream(handle, path, contract, stat.size);
  } finally {
    await handle.close();
  }
}

async function readStream(
  handle: FileHandle,
  path: string,
  contract: Contract,
  fileBytes: number,
): Promise<LoadedFixture> {
  const problems: string[] = [];
  const ids = new Int64Index();
  // The list body is at most about as long as the file: its orders without their statuses.
  const builder = new SeedBuilder(ids, fileBytes);
  // Once a problem is found the file is refused: storing more orders would be wasted.
  const reader = new OrdersReader(
    contract,
    problems,
    {
      add(order) {
        if (problems.length === 0) builder.add(order);
      },
      addFlat(fields, recordFields, status) {
        if (problems.length === 0) builder.addFlat(fields, recordFields, status);
      },
    },
    ids,
  );
  const stream = new JsonStream({
    field: "orders",
    allowBom: true,
    refuseRepeatedRootKeys: true,
    onElement: (entry, index) => reader.add(entry, index),
    onFlatElement: (fields, index) => reader.addFlat(fields, index),
  });
  const position = new LinePosition();
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  const utf8 = new Utf8Stream();
  const notUtf8At = (offset: number) => {
    if (offset !== -1)
      throw new FixtureError(`${path}: the file is not valid UTF-8 text (at byte ${offset})`);
  };
  let root: unknown;
  let chunk = buffer.subarray(0, 0);
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null);
      if (bytesRead === 0) break;
      chunk = buffer.subarray(0, bytesRead);
      notUtf8At(utf8.write(chunk));
      stream.write(chunk);
      position.advance(chunk);
    }
    notUtf8At(utf8.end());
    chunk = buffer.subarray(0, 0);
    root = stream.end();
  } catch (error) {
    if (error instanceof JsonStreamError)
      throw new FixtureError(
        `${path}: not valid JSON: ${error.message} ${position.describe(error.offset, chunk)}`,
      );
    throw error;
  }
  readDocument(root, contract, problems, reader);
  throwProblems(path, problems);
  return { apiKeys: (root as { apiKeys?: string[] }).apiKeys ?? [], seed: builder.finish() };
}

/** Lines counted as the chunks go by, so that an error's byte can be given as a line and column. */
class LinePosition {
  #base = 0;
  #lines = 1;
  #lineStart = 0;

  advance(chunk: Buffer): void {
    this.#count(chunk, chunk.length);
    this.#base += chunk.length;
  }

  /** Where a byte is, given the chunk being read when it went wrong (empty at the end of the file). */
  describe(offset: number, chunk: Buffer): string {
    const lines = this.#lines;
    const lineStart = this.#lineStart;
    this.#count(chunk, offset - this.#base);
    const where = `(line ${this.#lines}, column ${offset - this.#lineStart + 1})`;
    this.#lines = lines;
    this.#lineStart = lineStart;
    return where;
  }

  #count(chunk: Buffer, end: number): void {
    for (let at = chunk.indexOf(0x0a); at !== -1 && at < end; at = chunk.indexOf(0x0a, at + 1)) {
      this.#lines++;
      this.#lineStart = this.#base + at + 1;
    }
  }
}

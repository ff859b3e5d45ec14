import { close, closeSync, constants, openSync, read, rmSync, unlinkSync, writev } from "node:fs";
import { join } from "node:path";
import { shortLivedFolder } from "../../common/temp-folder.ts";
import type { MemoryBudget } from "../judging/memory-budget.ts";

/** What a held answer keeps in memory before the rest of it goes to its spill file. */
export const HELD_IN_MEMORY_BYTES = 1024 * 1024;
/** Bytes on their way to the file past which the answer's upstream is not read until they are written. */
export const SPILL_BACKLOG_BYTES = 1024 * 1024;
/** One read of the file on its way to the client; a few such buffers per answer, reused once taken. */
const READ_BYTES = 64 * 1024;
const READ_BUFFERS = 4;
/** Chunks written in one call. */
const CHUNKS_PER_WRITE = 64;

/** What a spill tells its answer. */
export interface SpillListener {
  /** Bytes went from memory to the file: the backlog is smaller. */
  written(): void;
  /** The file can take no more (a full disk, a file size limit): why. */
  failed(reason: string): void;
}

/** The client's side of a replay. */
export interface SpillSink {
  /**
   * Writes a chunk, its charge to the account (`charged` bytes) handed on with it; `flushed` is called
   * once the connection took it (its buffer is then reused).
   */
  write(chunk: Buffer, charged: number, flushed: () => void): void;
}

/**
 * Where held answers' spill files are made, as nginx's proxy_temp: each in a folder of its own made with
 * mkdtemp under the system's temporary directory (0700, the proxy's alone), opened 0600 with O_EXCL and
 * O_NOFOLLOW, then unlinked with its folder at once: the bytes live as long as the descriptor, and nothing
 * is left on disk by any end of the process, SIGKILL included. A problem with them is said once; the answers
 * go on without a file.
 */
export class SpillFolder {
  #said = false;
  #stopped = false;
  readonly #open = new Set<HeldSpill>();

  constructor(
    readonly held: MemoryBudget,
    readonly onProblem: (problem: string) => void = () => {},
  ) {}

  /** Spill files not yet done with. */
  get open(): number {
    return this.#open.size;
  }

  /** A new spill file for one answer, or undefined (said once) when none can be made. */
  spill(listener: SpillListener): HeldSpill | undefined {
    if (this.#stopped) return undefined;
    try {
      const spill = new HeldSpill(openUnlinked(), this, listener);
      this.#open.add(spill);
      return spill;
    } catch (error) {
      this.problem(`the proxy cannot make a file to hold answers in: ${reasonOf(error)}`);
      return undefined;
    }
  }

  /** Said once for the whole run: one full disk should not print a line per answer. */
  problem(problem: string): void {
    if (this.#said) return;
    this.#said = true;
    this.onProblem(problem);
  }

  forget(spill: HeldSpill): void {
    this.#open.delete(spill);
  }

  /** The proxy stops: every file still open is closed. */
  stop(): void {
    this.#stopped = true;
    for (const spill of [...this.#open]) spill.dispose();
  }
}

/** A file only this descriptor reaches: made in a private folder, then the file and the folder unlinked. */
function openUnlinked(): number {
  const folder = shortLivedFolder("petstore-proxy-held-");
  try {
    const { O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;
    const path = join(folder, "answer");
    const fd = openSync(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    try {
      unlinkSync(path);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    return fd;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * One held answer's bytes past its share of memory, in a file: appended in order (the chunks on their way
 * charged to the account until written), then read back once to the client at the pace its connection
 * takes them, through a few buffers reused, so that the answer never sits in the process's memory whole.
 * Page cache is the kernel's, not the process's.
 */
export class HeldSpill {
  /** Chunks not yet in the file, in order: on their way, or left over when writing failed. */
  readonly #backlog: Buffer[] = [];
  #backlogBytes = 0;
  #written = 0;
  #writing = false;
  #failure: string | undefined;
  #disposed = false;
  #closed = false;
  #replay: Replay | undefined;

  readonly held: MemoryBudget;

  constructor(
    readonly fd: number,
    readonly folder: SpillFolder,
    readonly listener: SpillListener,
  ) {
    this.held = folder.held;
  }

  /** Bytes in memory on their way to the file. */
  get backlog(): number {
    return this.#backlogBytes;
  }

  /** Bytes in the file. */
  get written(): number {
    return this.#written;
  }

  get failure(): string | undefined {
    return this.#failure;
  }

  /** Adds a chunk after those before it, charged to the account until it is in the file. */
  append(chunk: Buffer): void {
    if (this.#disposed || this.#replay !== undefined)
      throw new Error("a spill takes no bytes once read back");
    if (chunk.length === 0) return;
    this.held.take(chunk.length);
    this.#backlog.push(chunk);
    this.#backlogBytes += chunk.length;
    this.#writeBacklog();
  }

  /**
   * Sends what it holds to `sink` once it is all written (or writing failed: the file's bytes, then those
   * that never reached it), paced by the sink's flushes; `ended` once all was handed to the sink, or with
   * why the file could not be read. Then the file is closed.
   */
  replay(sink: SpillSink, ended: (error?: string) => void): void {
    if (this.#disposed || this.#replay !== undefined) return;
    this.held.take(READ_BYTES * READ_BUFFERS);
    this.#replay = { sink, ended, position: 0, reading: false, buffers: [] };
    this.#readBack();
  }

  /** Done with, however the exchange ended: the file is closed and what it held in memory goes back. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    // Chunks and read buffers are freed by the collector: charged until it ran.
    this.held.letGo(this.#backlogBytes + (this.#replay === undefined ? 0 : READ_BYTES * READ_BUFFERS));
    this.#backlog.length = 0;
    this.#backlogBytes = 0;
    this.folder.forget(this);
    // A write or read on its way keeps the descriptor until it returns: its number could be another file's.
    if (!this.#writing && this.#replay?.reading !== true) this.#close();
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    close(this.fd, () => {});
  }

  #writeBacklog(): void {
    if (this.#writing || this.#disposed || this.#failure !== undefined || this.#backlog.length === 0) return;
    this.#writing = true;
    writev(this.fd, this.#backlog.slice(0, CHUNKS_PER_WRITE), this.#written, (error, bytes) => {
      this.#writing = false;
      if (this.#disposed) {
        if (this.#replay?.reading !== true) this.#close();
        return;
      }
      if (error || bytes === 0) this.#failed(error ?? new Error("the file took no bytes"));
      else this.#wrote(bytes);
    });
  }

  #wrote(bytes: number): void {
    this.#written += bytes;
    this.#backlogBytes -= bytes;
    this.held.letGo(bytes);
    let left = bytes;
    while (left > 0) {
      const first = this.#backlog[0] as Buffer;
      if (first.length > left) {
        this.#backlog[0] = first.subarray(left);
        break;
      }
      left -= first.length;
      this.#backlog.shift();
    }
    this.listener.written();
    if (this.#disposed) return;
    this.#writeBacklog();
    if (this.#backlog.length === 0) this.#readBack();
  }

  #failed(error: Error): void {
    this.#failure = `the proxy could not write it aside to wait for its verdict (${reasonOf(error)})`;
    this.folder.problem(
      `the proxy cannot write held answers to their file, so they go on before their verdict: ${reasonOf(error)}`,
    );
    this.listener.failed(this.#failure);
    this.#readBack();
  }

  /** Reads the file into a free buffer and hands it on, while a buffer is free; then what never reached it. */
  #readBack(): void {
    const replay = this.#replay;
    if (replay === undefined || this.#disposed || replay.reading) return;
    // Everything goes to the file first, unless writing failed.
    if (this.#failure === undefined && (this.#writing || this.#backlog.length > 0)) return;
    if (replay.position >= this.#written) {
      this.#replayBacklog(replay);
      return;
    }
    const buffer = replay.buffers.pop() ?? this.#newBuffer(replay);
    if (buffer === undefined) return;
    replay.reading = true;
    const length = Math.min(READ_BYTES, this.#written - replay.position);
    read(this.fd, buffer, 0, length, replay.position, (error, bytes) => {
      replay.reading = false;
      if (this.#disposed) {
        if (!this.#writing) this.#close();
        return;
      }
      if (error || bytes === 0) {
        this.#endReplay(replay, `the proxy could not read back what it held (${reasonOf(error)})`);
        return;
      }
      replay.position += bytes;
      replay.sink.write(buffer.subarray(0, bytes), 0, () => {
        replay.buffers.push(buffer);
        this.#readBack();
      });
      this.#readBack();
    });
  }

  /** A buffer not yet made, while fewer than READ_BUFFERS were. */
  #newBuffer(replay: Replay): Buffer | undefined {
    if ((replay.made ?? 0) >= READ_BUFFERS) return undefined;
    replay.made = (replay.made ?? 0) + 1;
    return Buffer.allocUnsafeSlow(READ_BYTES);
  }

  /** The chunks that never reached the file (writing failed) go after it, their charge given when taken. */
  #replayBacklog(replay: Replay): void {
    for (const chunk of this.#backlog.splice(0)) {
      this.#backlogBytes -= chunk.length;
      replay.sink.write(chunk, chunk.length, () => {});
    }
    this.#endReplay(replay);
  }

  #endReplay(replay: Replay, error?: string): void {
    this.dispose();
    replay.ended(error);
  }
}

interface Replay {
  sink: SpillSink;
  ended: (error?: string) => void;
  /** Where the next read starts. */
  position: number;
  reading: boolean;
  /** Buffers the client's connection took, free to read into again. */
  buffers: Buffer[];
  made?: number;
}

function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  return code === undefined || error.message.startsWith(code) ? error.message : `${code}: ${error.message}`;
}

import type { PiecedBody } from "./exchange.ts";
import type { StoredOrder } from "./order-record.ts";
import type { Seed } from "./seed.ts";

const encoder = new TextEncoder();
const OPEN = 0x5b;
const COMMA = 0x2c;
const CLOSE = 0x5d;
// The world's own bytes are written into buffers of at most this size, the first of them this small.
const PIECE_BYTES = 256 * 1024;
const FIRST_BUFFER_BYTES = 1024;
// What a view of the seed's bytes costs the world that keeps it: the view object, not the bytes.
const VIEW_BYTES = 96;

/** A list body in pieces, and how many of its bytes are the world's own rather than views of its seed's. */
export interface ListPieces extends PiecedBody {
  readonly ownBytes: number;
}

/**
 * The list of a world that changed, removed or added orders: runs of unchanged seed orders as views of the
 * seed's list body, the world's own orders' JSON in their places between them, added orders after. It costs
 * what the world changed (sorting its changed places), not the size of the seed.
 */
export function listPieces(
  seed: Seed,
  changedAt: ReadonlyMap<number, StoredOrder | null>,
  added: Iterable<StoredOrder>,
): ListPieces {
  const pieces = new PieceWriter();
  pieces.byte(OPEN);
  let listedAny = false;
  const separate = () => {
    if (listedAny) pieces.byte(COMMA);
    listedAny = true;
  };
  const addSeedRun = (from: number, to: number) => {
    if (from >= to) return;
    separate();
    pieces.shared(seed.bytesOf(from, to));
  };
  let next = 0;
  for (const place of Float64Array.from(changedAt.keys()).sort()) {
    addSeedRun(next, place);
    const change = changedAt.get(place);
    if (change) {
      separate();
      pieces.text(change.json);
    }
    next = place + 1;
  }
  addSeedRun(next, seed.size);
  for (const order of added) {
    separate();
    pieces.text(order.json);
  }
  pieces.byte(CLOSE);
  return pieces.finish();
}

/**
 * Pieces of a body: shared bytes as views of them, the world's own bytes written into buffers of its own
 * (small at first, doubling up to PIECE_BYTES, so a world that added one order holds about that order), each
 * stretch of them between two shared views a view of its buffer.
 */
class PieceWriter {
  readonly #pieces: Uint8Array[] = [];
  #buffer = new Uint8Array(FIRST_BUFFER_BYTES);
  #start = 0;
  #at = 0;
  #ownBytes = FIRST_BUFFER_BYTES;
  #byteLength = 0;

  byte(value: number): void {
    this.#reserve(1);
    this.#buffer[this.#at++] = value;
  }

  text(json: string): void {
    // Room for the text however wide its characters: at most three bytes for each UTF-16 unit.
    this.#reserve(json.length * 3);
    this.#at += encoder.encodeInto(json, this.#buffer.subarray(this.#at)).written;
  }

  shared(view: Uint8Array): void {
    this.#close();
    this.#pieces.push(view);
    this.#byteLength += view.length;
    this.#ownBytes += VIEW_BYTES;
  }

  finish(): ListPieces {
    this.#close();
    return { pieces: this.#pieces, byteLength: this.#byteLength, ownBytes: this.#ownBytes };
  }

  #reserve(bytes: number): void {
    if (this.#at + bytes <= this.#buffer.length) return;
    this.#close();
    const size = Math.max(bytes, Math.min(PIECE_BYTES, this.#buffer.length * 2));
    this.#buffer = new Uint8Array(size);
    this.#ownBytes += size;
    this.#start = 0;
    this.#at = 0;
  }

  /** What was written since the last piece becomes one. */
  #close(): void {
    if (this.#at === this.#start) return;
    this.#pieces.push(this.#buffer.subarray(this.#start, this.#at));
    this.#byteLength += this.#at - this.#start;
    this.#ownBytes += VIEW_BYTES;
    this.#start = this.#at;
  }
}

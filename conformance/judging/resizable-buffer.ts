/**
 * ES2024's resizable ArrayBuffer (in Node 20, not in the project's ES2022 library): it grows in place, and
 * shrunk to nothing its pages go back to the system at once, with no collection and no gaps left in the
 * allocator's heap. Moved to another thread (a transfer), it keeps that property there.
 */
export interface ResizableBuffer extends ArrayBuffer {
  readonly maxByteLength: number;
  readonly resizable: boolean;
  resize(length: number): void;
}

export const ResizableBuffer = ArrayBuffer as unknown as new (
  length: number,
  options: { maxByteLength: number },
) => ResizableBuffer;

/** Hands a view's pages back to the system at once when its buffer is resizable; its bytes are gone then. */
export function givePagesBack(view: Uint8Array): void {
  const buffer = view.buffer as ResizableBuffer;
  if (buffer.resizable) buffer.resize(0);
}

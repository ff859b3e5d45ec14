/**
 * A value now, or later. The in-memory state answers at once, so a request on it is handled in one
 * synchronous pass with no promise made; a shared store (Redis) answers later. The rules are written once,
 * over `SyncOrAsync`, and run on either.
 */
export type SyncOrAsync<T> = T | Promise<T>;

export function then<T, R>(value: SyncOrAsync<T>, next: (value: T) => SyncOrAsync<R>): SyncOrAsync<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/**
 * A value now, or later. The in-memory state answers at once, so a request on it is handled in one
 * synchronous pass with no promise made; a shared store (Redis) answers later. The rules are written once,
 * over `Maybe`, and run on either.
 */
export type Maybe<T> = T | Promise<T>;

export function then<T, R>(value: Maybe<T>, next: (value: T) => Maybe<R>): Maybe<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}

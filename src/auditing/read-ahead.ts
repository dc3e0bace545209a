/**
 * Yields the result of each read while the next one is already under way,
 * so the database works on the next batch while the caller works through
 * this one. `next` names the read that follows a result (none: it was the
 * last). With `afterFirst`, the second read waits until the caller is done
 * with the first result: a caller that needs one read pays for one.
 */
export async function* readAhead<T>(
  first: () => Promise<T>,
  next: (result: T) => (() => Promise<T>) | undefined,
  { afterFirst = false } = {},
): AsyncGenerator<T> {
  let pending: Promise<T> | undefined = first();
  for (let index = 0; pending; index++) {
    const result: T = await pending;
    const following = next(result);
    const deferred = afterFirst && index === 0;
    pending = following && !deferred ? following() : undefined;
    // Awaited on the next turn; a caller that stops early must not leave an unhandled rejection behind.
    pending?.catch(() => undefined);
    yield result;
    if (following && deferred) pending = following();
  }
}

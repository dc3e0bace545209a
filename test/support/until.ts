/** Reads until `done` holds or `timeoutMs` passes, and returns the last reading: the test's expectation then says what was wrong. */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * Resolves between `fromMs` and `fromMs + slackMs` into a second of this
 * process's clock, at once when it already is: the merchants' rate limit
 * counts whole Unix seconds, so a test that needs its requests in one
 * second (or where two clocks' seconds differ) starts there.
 */
export async function intoSecond(fromMs: number, slackMs: number): Promise<void> {
  const at = Date.now() % 1000;
  if (at >= fromMs && at <= fromMs + slackMs) return;
  await new Promise((resolve) => setTimeout(resolve, (fromMs - at + 1000) % 1000));
}

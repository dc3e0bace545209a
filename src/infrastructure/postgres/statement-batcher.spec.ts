import { StatementBatcher } from './statement-batcher';

/**
 * A flush that records its batches and fails any batch holding a bad item.
 * Each flush takes 5 ms, or until `held` settles when given.
 */
function recordingFlush(failure: (items: readonly string[]) => Error | undefined, held?: Promise<void>) {
  const batches: string[][] = [];
  const flush = async (items: readonly string[]) => {
    batches.push([...items]);
    await (held ?? new Promise((r) => setTimeout(r, 5)));
    const error = failure(items);
    if (error) throw error;
    return items.map((item) => item.toUpperCase());
  };
  return { batches, flush };
}

const badItem = (items: readonly string[]) => (items.includes('bad') ? new Error('bad item') : undefined);

/** Lets the batcher's end-of-turn start run: the items handed in before are then in flight. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('StatementBatcher', () => {
  it('sends the items of one turn together, and the ones that arrive while it is busy in the next flush', async () => {
    // The first flush stays in flight until every later item has arrived: a
    // timed flush could end first on a busy machine, and 'f' go on its own.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const { batches, flush } = recordingFlush(() => undefined, held);
    const batcher = new StatementBatcher(flush, { maxBatch: 10, maxInFlight: 1 });
    const first = ['a', 'b'].map((item) => batcher.run(item));
    await nextTurn();
    expect(batches).toEqual([['a', 'b']]);
    const later = ['c', 'd', 'e'].map((item) => batcher.run(item));
    await nextTurn();
    const late = batcher.run('f');
    await nextTurn();
    expect(batches).toEqual([['a', 'b']]);
    release();
    expect(await Promise.all([...first, ...later, late])).toEqual(['A', 'B', 'C', 'D', 'E', 'F']);
    expect(batches).toEqual([
      ['a', 'b'],
      ['c', 'd', 'e', 'f'],
    ]);
  });

  it('sends a lone item at the end of the turn it arrives in, not at once', async () => {
    const { batches, flush } = recordingFlush(() => undefined);
    const batcher = new StatementBatcher(flush, { maxBatch: 10, maxInFlight: 2 });
    const result = batcher.run('only');
    expect(batches).toEqual([]);
    await nextTurn();
    expect(batches).toEqual([['only']]);
    expect(await result).toBe('ONLY');
  });

  it('splits a turn larger than maxBatch over the flushes it may run at once', async () => {
    const { batches, flush } = recordingFlush(() => undefined);
    const batcher = new StatementBatcher(flush, { maxBatch: 2, maxInFlight: 2 });
    const results = Promise.all(['a', 'b', 'c', 'd', 'e'].map((item) => batcher.run(item)));
    await nextTurn();
    expect(batches).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    expect(await results).toEqual(['A', 'B', 'C', 'D', 'E']);
    expect(batches[2]).toEqual(['e']);
  });

  it('fails every item of a failed flush by default', async () => {
    const { flush } = recordingFlush(badItem);
    const batcher = new StatementBatcher(flush, { maxBatch: 10, maxInFlight: 1 });
    const first = batcher.run('first');
    await nextTurn();
    const outcomes = await Promise.allSettled(['ok', 'bad', 'fine'].map((item) => batcher.run(item)));
    expect(await first).toBe('FIRST');
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
  });

  it('with isolateFailures, fails only the bad item: the others are flushed alone', async () => {
    const { batches, flush } = recordingFlush(badItem);
    const batcher = new StatementBatcher(flush, { maxBatch: 10, maxInFlight: 1, isolateFailures: true });
    const first = batcher.run('first');
    await nextTurn();
    const outcomes = await Promise.allSettled(['ok', 'bad', 'fine'].map((item) => batcher.run(item)));
    expect(await first).toBe('FIRST');
    expect(outcomes).toEqual([
      { status: 'fulfilled', value: 'OK' },
      { status: 'rejected', reason: new Error('bad item') },
      { status: 'fulfilled', value: 'FINE' },
    ]);
    expect(batches.slice(1)).toEqual([['ok', 'bad', 'fine'], ['ok'], ['bad'], ['fine']]);
  });

  it('with isolateFailures, still fails the whole batch at once when the database is unreachable', async () => {
    const unreachable = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const { batches, flush } = recordingFlush(() => unreachable);
    const batcher = new StatementBatcher(flush, { maxBatch: 10, maxInFlight: 1, isolateFailures: true });
    const first = batcher.run('first').catch((error: unknown) => error);
    await nextTurn();
    const outcomes = await Promise.allSettled(['a', 'b'].map((item) => batcher.run(item)));
    expect(await first).toBe(unreachable);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect(batches).toEqual([['first'], ['a', 'b']]);
  });
});

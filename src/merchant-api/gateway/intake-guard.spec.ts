import { IntakeGuard, QueueReading } from './intake-guard';

function guardOver(limits: { maxWaiting: number; maxWaitS: number }, readings: QueueReading[]) {
  const caps: number[] = [];
  let failures = 0;
  const guard = new IntakeGuard(
    limits,
    async (cap) => {
      caps.push(cap);
      const next = readings.shift();
      if (!next) throw new Error('the database does not answer');
      return next;
    },
    () => failures++,
  );
  return { guard, caps, failures: () => failures };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('IntakeGuard: the backlog policy', () => {
  it('with both limits 0 never reads the queue and never refuses', async () => {
    const { guard, caps } = guardOver({ maxWaiting: 0, maxWaitS: 0 }, []);
    expect(guard.shedding()).toBe(false);
    expect((await guard.status()).shedding).toBe(false);
    expect(caps).toEqual([]);
  });

  it.each([
    ['more orders waiting than allowed: refused', { maxWaiting: 10, maxWaitS: 0 }, { waiting: 11, oldestWaitS: 0 }, true],
    ['exactly as many as allowed: taken', { maxWaiting: 10, maxWaitS: 0 }, { waiting: 10, oldestWaitS: 999 }, false],
    ['the oldest waiting longer than allowed: refused', { maxWaiting: 0, maxWaitS: 30 }, { waiting: 1, oldestWaitS: 30.5 }, true],
    ['the oldest waiting exactly as long as allowed: taken', { maxWaiting: 0, maxWaitS: 30 }, { waiting: 1_000_000, oldestWaitS: 30 }, false],
    ['either limit passed, with both set: refused', { maxWaiting: 10, maxWaitS: 30 }, { waiting: 2, oldestWaitS: 31 }, true],
  ])('%s', async (_, limits, reading, refuses) => {
    const { guard } = guardOver(limits, [reading]);
    expect((await guard.status()).shedding).toBe(refuses);
    expect(guard.shedding()).toBe(refuses);
  });

  it('counts at most the limit + 1 orders (a long queue costs no more to read), and 10,000 + 1 with no count limit', async () => {
    const counted = guardOver({ maxWaiting: 50, maxWaitS: 0 }, [{ waiting: 0, oldestWaitS: 0 }]);
    await counted.guard.status();
    expect(counted.caps).toEqual([50]);
    const timed = guardOver({ maxWaiting: 0, maxWaitS: 30 }, [{ waiting: 0, oldestWaitS: 0 }]);
    await timed.guard.status();
    expect(timed.caps).toEqual([10_000]);
  });

  it('judges a submit on the latest reading without waiting for a new one, and reads at most once a second', async () => {
    const { guard, caps } = guardOver({ maxWaiting: 10, maxWaitS: 0 }, [
      { waiting: 50, oldestWaitS: 0 },
      { waiting: 0, oldestWaitS: 0 },
    ]);
    const start = 1_000_000;
    expect(guard.shedding(start)).toBe(false); // no reading yet: judged on the empty one, a reading starts
    await settle();
    expect(guard.shedding(start + 10)).toBe(true);
    for (let i = 0; i < 100; i++) guard.shedding(start + 20);
    await settle();
    expect(caps).toHaveLength(1);
  });

  it('keeps the last reading when a read fails, and says so', async () => {
    const { guard, failures } = guardOver({ maxWaiting: 10, maxWaitS: 0 }, [{ waiting: 50, oldestWaitS: 0 }]);
    expect((await guard.status()).shedding).toBe(true);
    guard.shedding(Date.now() + 5_000);
    await settle();
    await settle();
    expect(failures()).toBe(1);
    expect(guard.shedding(Date.now())).toBe(true);
  });
});

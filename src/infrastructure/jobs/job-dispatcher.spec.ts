import { JobDispatcher } from './job-dispatcher';

/**
 * A dispatcher over an in-memory queue whose jobs become due at given times; it counts its claims.
 * `duringClaim`, when given, is awaited inside each claim (its number, 1-based): a test can hold a claim open.
 */
function dispatcherOver(pollMs: number, duringClaim?: (claim: number) => Promise<void>) {
  const due: { at: number; id: string }[] = [];
  const ran: string[] = [];
  let claims = 0;
  const dispatcher = new JobDispatcher<string>({
    concurrency: 4,
    pollMs,
    claim: async (limit) => {
      claims++;
      await duringClaim?.(claims);
      const now = Date.now();
      const ready = due.filter((job) => job.at <= now).slice(0, limit);
      for (const job of ready) due.splice(due.indexOf(job), 1);
      return ready.map((job) => job.id);
    },
    run: async (id) => {
      ran.push(id);
    },
    describe: (id) => id,
    log: () => undefined,
  });
  return { dispatcher, due, ran, claims: () => claims };
}

const until = async (condition: () => boolean, timeoutMs = 2_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe('JobDispatcher: idle, it claims only when told of work or at its long poll', () => {
  it('makes one claim at start and then waits for the poll, however long', async () => {
    const { dispatcher, claims } = dispatcherOver(60_000);
    dispatcher.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(claims()).toBe(1);
    await dispatcher.stop();
  });

  it('claims at once when nudged', async () => {
    const { dispatcher, due, ran } = dispatcherOver(60_000);
    dispatcher.start();
    await new Promise((resolve) => setTimeout(resolve, 20));
    due.push({ at: Date.now(), id: 'new' });
    dispatcher.nudge();
    await until(() => ran.includes('new'));
    await dispatcher.stop();
  });

  it('claims a job put off for later once it is due, without a nudge or a poll', async () => {
    const { dispatcher, due, ran, claims } = dispatcherOver(60_000);
    dispatcher.start();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const before = claims();
    due.push({ at: Date.now() + 150, id: 'retry' });
    dispatcher.nudgeIn(150);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(ran).toEqual([]);
    await until(() => ran.includes('retry'));
    // One wake-up for the retry (and the coalesced claim after the job ended), not a poll every few ms.
    expect(claims() - before).toBeLessThanOrEqual(2);
    await dispatcher.stop();
  });

  it('groups wake-ups asked for about the same time into one', async () => {
    const { dispatcher, due, ran, claims } = dispatcherOver(60_000);
    dispatcher.start();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const before = claims();
    const at = Date.now() + 100;
    for (let i = 0; i < 20; i++) {
      due.push({ at, id: `r${i}` });
      dispatcher.nudgeIn(100);
    }
    await until(() => ran.length === 20);
    // Four slots: five claims for twenty jobs, each after the last batch ended, plus the one the timer made.
    expect(claims() - before).toBeLessThanOrEqual(7);
    await dispatcher.stop();
  });

  it('forgets the wake-ups asked for when it stops', async () => {
    const { dispatcher, claims } = dispatcherOver(60_000);
    dispatcher.start();
    await new Promise((resolve) => setTimeout(resolve, 20));
    dispatcher.nudgeIn(50);
    await dispatcher.stop();
    const after = claims();
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(claims()).toBe(after);
  });

  it('claims again at once after a nudge that came while it was claiming', async () => {
    let release!: () => void;
    const firstClaimHeld = new Promise<void>((resolve) => (release = resolve));
    const { dispatcher, claims } = dispatcherOver(60_000, (claim) => (claim === 1 ? firstClaimHeld : Promise.resolve()));
    dispatcher.start();
    try {
      await new Promise((resolve) => setTimeout(resolve, 20));
      dispatcher.nudge();
      // The nudge's coalescing delay passes while the first claim is still under way.
      await new Promise((resolve) => setTimeout(resolve, 50));
      release();
      await until(() => claims() === 2);
    } finally {
      await dispatcher.stop();
    }
  });
});

describe('JobDispatcher: jobs at once', () => {
  it('runs the jobs it claimed side by side, no more than its concurrency, and a failed job frees its place like the others', async () => {
    const events: string[] = [];
    let running = 0;
    let peak = 0;
    let ended = 0;
    const jobs = ['slow', 'fails', 'quick'];
    const dispatcher = new JobDispatcher<string>({
      concurrency: 2,
      pollMs: 60_000,
      claim: async (limit) => jobs.splice(0, limit),
      run: async (id) => {
        peak = Math.max(peak, ++running);
        events.push(`run ${id} with ${running} running`);
        try {
          if (id === 'slow') await new Promise((resolve) => setTimeout(resolve, 60));
          if (id === 'fails') {
            await new Promise((resolve) => setTimeout(resolve, 10));
            throw new Error('upstream down');
          }
        } finally {
          running--;
          ended++;
        }
      },
      describe: (id) => id,
      log: () => undefined,
    });
    dispatcher.start();
    try {
      await until(() => ended === 3);
    } finally {
      await dispatcher.stop();
    }
    // The third waited for a place: it ran once the failed job had ended, beside the slow one.
    expect(events).toEqual(['run slow with 1 running', 'run fails with 2 running', 'run quick with 2 running']);
    expect(peak).toBe(2);
    expect(running).toBe(0);
  });
});

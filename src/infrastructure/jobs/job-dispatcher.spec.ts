import { JobDispatcher } from './job-dispatcher';

/**
 * New work is announced (nudge), and an idle dispatcher looks for it only
 * every pollMs otherwise. An announcement that comes while the dispatcher is
 * claiming must not be lost: the work it announces would wait for the poll.
 */
describe('JobDispatcher', () => {
  it('claims again at once after a nudge that came while it was claiming', async () => {
    let release!: () => void;
    const firstClaimHeld = new Promise<void>((resolve) => (release = resolve));
    const claims: number[] = [];
    const dispatcher = new JobDispatcher<string>({
      concurrency: 4,
      pollMs: 60_000,
      claim: async () => {
        claims.push(Date.now());
        if (claims.length === 1) await firstClaimHeld;
        return [];
      },
      run: async () => undefined,
      describe: (job) => job,
      log: () => undefined,
    });
    dispatcher.start();
    try {
      await new Promise((resolve) => setTimeout(resolve, 20));
      dispatcher.nudge();
      // The nudge's coalescing delay passes while the first claim is still under way.
      await new Promise((resolve) => setTimeout(resolve, 50));
      release();
      const deadline = Date.now() + 2_000;
      while (claims.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(claims).toHaveLength(2);
    } finally {
      await dispatcher.stop();
    }
  });

  it('waits for the poll when nothing announced work', async () => {
    let claims = 0;
    const dispatcher = new JobDispatcher<string>({
      concurrency: 4,
      pollMs: 60_000,
      claim: async () => {
        claims++;
        return [];
      },
      run: async () => undefined,
      describe: (job) => job,
      log: () => undefined,
    });
    dispatcher.start();
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(claims).toBe(1);
    } finally {
      await dispatcher.stop();
    }
  });
});

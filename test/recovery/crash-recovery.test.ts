import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { PlacedOrderState } from '../../src/ledger/order/order.decider';
import { openWallet } from '../support/fixtures';
import { checkEventInvariants, checkReadModels } from '../support/invariants';
import { RunningService, startService, TEST_ENV } from '../support/service';
import { describeEachStore } from '../support/event-stores';
import { TYPESCRIPT_LOADER } from '../support/service-node-flags';
import { TestDatabase } from '../support/test-database';

const ROOT = resolve(__dirname, '../..');
const KILL_AFTER_ACKS = 400;
/** Eight kills in a row once fell between commit groups on a machine busy with other suites; each costs a few seconds. */
const MAX_CRASHES = 20;

/**
 * Where the n-th crash of a run falls: after a few more acknowledgements and a
 * few more milliseconds each time, so that one run's kills do not all land at
 * the same point of the commit groups' cycle.
 */
function killPoint(crash: number): { acks: number; delayMs: number } {
  return { acks: KILL_AFTER_ACKS + 37 * (crash - 1), delayMs: 3 * (crash - 1) };
}

/**
 * Runs the burst worker until it has acknowledged `at.acks` results, then
 * kills it with SIGKILL `at.delayMs` later; returns every acknowledgement it printed.
 */
async function burstThenKill(db: TestDatabase, merchants: string[], at: { acks: number; delayMs: number }, stepByStep: boolean): Promise<string[]> {
  const child = spawn(process.execPath, [...TYPESCRIPT_LOADER, 'test/support/burst-worker.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...TEST_ENV,
      ...db.env,
      BURST_MERCHANTS: merchants.join(','),
      BURST_STEP_BY_STEP: String(stepByStep),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<NodeJS.Signals | number | null>((done) => child.on('exit', (code, signal) => done(signal ?? code)));
  const lines: string[] = [];
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`worker gave ${lines.length} ACKs in 60 s; stderr: ${stderr}`)), 60_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.startsWith('ACK ')) return;
      lines.push(line);
      if (lines.length === at.acks) {
        clearTimeout(timer);
        setTimeout(() => {
          child.kill('SIGKILL');
          done();
        }, at.delayMs);
      }
    });
    void exited.then((how) => fail(new Error(`worker exited early (${how}); stderr: ${stderr}`)));
  });
  expect(await exited).toBe('SIGKILL');
  await untilOnlyOwnBackends(db);
  return lines;
}

/**
 * Waits until the killed worker's backends have ended. A backend that was
 * committing when its client died still commits: until it ends, the log can
 * still grow, and a recovery sweep would miss what it adds. (It took longer
 * than a sweep on a machine busy with other suites.) The test's own pool is
 * all that is left on the database then.
 */
async function untilOnlyOwnBackends(db: TestDatabase): Promise<void> {
  for (const deadline = Date.now() + 10_000; ; await new Promise((r) => setTimeout(r, 20))) {
    const { rows } = await db.pool.query<{ count: number }>('select count(*)::int as count from pg_stat_activity where datname = current_database()');
    if (rows[0].count <= db.pool.totalCount) return;
    if (Date.now() > deadline) throw new Error(`the killed worker's backends were still there after 10 s (${rows[0].count} backends on the database)`);
  }
}

/** Every acknowledged result is in the log as acknowledged. */
function expectAcknowledgedInLog(acks: readonly string[], log: Awaited<ReturnType<typeof checkEventInvariants>>): void {
  for (const line of acks) {
    const [, kind, id, merchantOrStage, outcome] = line.split(' ');
    if (kind === 'submit' && outcome !== 'refused') {
      expect([id, log.orders.get(id)?.order.merchantId]).toEqual([id, merchantOrStage]);
      expect(['placed', 'refused']).not.toContain(log.orders.get(id)!.stage);
    }
    if (kind === 'outcome') expect([id, log.orders.get(id)?.stage]).toEqual([id, merchantOrStage]);
    if (kind === 'deposit') expect(log.wallets.get(id)!.deposits.has(merchantOrStage)).toBe(true);
  }
}

describeEachStore('crash recovery: SIGKILL during a burst of commands', (store) => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await store.createDatabase();
  });
  afterAll(async () => db.drop());

  // Only a store that appends to several streams at once can put them in one append.
  (store.appendsAtomically ? it : it.skip)(
    'with an order and its wallet movement in one append: loses nothing acknowledged and leaves no order half-done',
    async () => {
      const acks: string[] = [];
      let service!: RunningService;
      for (let crash = 1; crash <= 2; crash++) {
        const setup = await startService(db);
        const merchants = await Promise.all(Array.from({ length: 4 }, () => openWallet(setup.commands, 60n * 120n)));
        await setup.stop();
        acks.push(...(await burstThenKill(db, merchants, killPoint(crash), false)));
        service = await startService(db, { ORDER_RECOVERY_GRACE_MS: '0' });
        const crashed = await checkEventInvariants(service.store, { settled: false });
        expect(crashed.violations).toEqual([]);
        const halfDone = [...crashed.orders.values()].filter((o) => ['placed', 'succeeding', 'failing'].includes(o.stage));
        console.log(`after SIGKILL ${crash}: ${crashed.events} events, ${crashed.orders.size} orders, ${halfDone.length} half-done`);
        expect(halfDone).toEqual([]);
        if (crash < 2) await service.stop();
      }
      try {
        await service.catchUp();
        expect(await checkReadModels(service.pool, await checkEventInvariants(service.store))).toEqual([]);
        expectAcknowledgedInLog(acks, await checkEventInvariants(service.store));
      } finally {
        await service.stop();
      }
    },
  );

  it('step by step (a store that appends one stream at a time): loses nothing acknowledged, and recovery completes or refuses every half-done order', async () => {
    // Appends are committed in groups, so a kill can fall where every order in
    // flight has just finished a step: crash again (new merchants, a later kill
    // point) until one leaves orders half-done, or the test would not exercise
    // recovery at all.
    const acks: string[] = [];
    let service!: RunningService;
    let halfDone: PlacedOrderState[] = [];
    for (let crash = 1; halfDone.length === 0; crash++) {
      if (crash > MAX_CRASHES) throw new Error(`${MAX_CRASHES} crashes in a row left no order half-done`);
      const setup = await startService(db);
      const merchants = await Promise.all(Array.from({ length: 4 }, () => openWallet(setup.commands, 60n * 120n)));
      await setup.stop();
      acks.push(...(await burstThenKill(db, merchants, killPoint(crash), true)));

      service = await startService(db, { ORDER_RECOVERY_GRACE_MS: '0' });
      // Straight after the crash: money moved at most once, nothing overdrawn.
      const crashed = await checkEventInvariants(service.store, { settled: false });
      expect(crashed.violations).toEqual([]);
      halfDone = [...crashed.orders.values()].filter((o) => ['placed', 'succeeding', 'failing'].includes(o.stage));
      console.log(`after SIGKILL ${crash}: ${crashed.events} events, ${crashed.orders.size} orders, ${halfDone.length} half-done`);
      if (halfDone.length === 0) await service.stop();
    }
    try {
      await service.catchUp();
      await service.recovery.sweep(0);
      const recovered = await checkEventInvariants(service.store);
      expect(recovered.violations).toEqual([]);
      await service.catchUp();
      expect(await checkReadModels(service.pool, recovered)).toEqual([]);

      expectAcknowledgedInLog(acks, recovered);
      // The crash interrupted orders mid-way, and none of them is left so.
      for (const order of halfDone) expect(['placed', 'succeeding', 'failing']).not.toContain(recovered.orders.get(order.order.orderNo)!.stage);
    } finally {
      await service.stop();
    }
  });
});

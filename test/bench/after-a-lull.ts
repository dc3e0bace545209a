/**
 * `npm run bench:lull`: the submits of the first second after a lull, with
 * the service's pooled connections kept open through it (the default
 * DATABASE_POOL_IDLE_MS) and closed after 10 s unused (node-postgres's own
 * default). Two services on databases of their own, side by side in one
 * run: each is warmed up, then, round after round, left alone for the lull
 * and sent an open-loop burst; the two take turns at going first. A
 * connection opened again starts a backend and plans each named statement
 * again, and the burst's first submits wait for it.
 *
 * Settings: --lull (LULL_S, 15 s), --rounds (ROUNDS, 4), --rate (RATE, 300
 * submits a second), --burst (BURST_MS, 1000 ms).
 */
import { log, onCleanUp, runBench } from './clean-up';
import { Burst, lullTable, SettingBursts } from './after-a-lull-report';
import { callbackReceiver, upstreamDelayMs, upstreamSimulator } from './end-to-end';
import { runLoad } from './load-generator';
import { sleep } from './processes';
import { SKU_ID, startProvisionedService } from './service';
import { numberOption } from './settings';
import { freshDatabase } from './systems';
import { TestDatabase } from '../support/test-database';

const option = (name: string, variable: string, fallback: number) => numberOption(process.argv, process.env, name, variable, fallback);

/** Past the burst's last reply, for the orders' fulfilment and callbacks to settle before the other service's burst. */
const SETTLE_MS = 2000;

const SETTINGS = [
  { setting: 'kept open (DATABASE_POOL_IDLE_MS=600000, the default)', env: { DATABASE_POOL_IDLE_MS: '600000' } },
  { setting: 'closed after 10 s unused (DATABASE_POOL_IDLE_MS=10000)', env: { DATABASE_POOL_IDLE_MS: '10000' } },
];

/** The database server's clock, for connections' start times. */
async function serverNow(db: TestDatabase): Promise<string> {
  return (await db.pool.query<{ now: string }>('select clock_timestamp()::text as now')).rows[0].now;
}

/** The service's connections to its database that started at or after `since` and are open still (the benchmark's own left out). */
async function openedSince(db: TestDatabase, since: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    'select count(*)::int as n from pg_stat_activity where datname = current_database() and backend_start >= $1::timestamptz and pid <> pg_backend_pid()',
    [since],
  );
  return rows[0].n;
}

async function main(): Promise<void> {
  const lullMs = option('lull', 'LULL_S', 15) * 1000;
  const rounds = option('rounds', 'ROUNDS', 4);
  const rate = option('rate', 'RATE', 300);
  const burstMs = option('burst', 'BURST_MS', 1000);
  const receiver = await callbackReceiver();
  onCleanUp('stop the callback receiver', () => receiver.stop());
  const upstream = await upstreamSimulator(upstreamDelayMs());

  const systems = [];
  for (const { setting, env } of SETTINGS) {
    const db = await freshDatabase('topup_bench_lull');
    const { service, merchants } = await startProvisionedService(`service (${setting})`, db, {
      env: { CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true', UPSTREAM_URL: upstream.url, ...env },
      merchants: 50,
      callbackUrl: receiver.url,
    });
    const load = (tag: string, durationMs: number) =>
      runLoad({ baseUrl: service.url, concurrency: 32, merchants, skuId: SKU_ID, ratePerSecond: rate, durationMs, tag });
    log(`warm-up: 5 s at ${rate}/s`);
    await load(`lull-warm-${systems.length}`, 5000);
    systems.push({ setting, db, service, load, bursts: [] as Burst[] });
  }

  for (let round = 0; round < rounds; round++) {
    log(`round ${round + 1} of ${rounds}: ${lullMs / 1000} s of nothing, then ${burstMs} ms at ${rate}/s`);
    await sleep(lullMs);
    const order = round % 2 === 0 ? systems : [...systems].reverse();
    for (const system of order) {
      const since = await serverNow(system.db);
      const result = await system.load(`lull-${round}-${system.setting.length}`, burstMs);
      await sleep(SETTLE_MS);
      const failures = [...result.failures.values()].reduce((n, c) => n + c, 0);
      system.bursts.push({ latenciesMs: result.latenciesMs, failures, newConnections: await openedSince(system.db, since) });
    }
  }
  for (const { service } of systems) await service.child.stop();

  const settings: SettingBursts[] = systems.map(({ setting, bursts }) => ({ setting, bursts }));
  console.log(
    [
      '',
      `Submits in the first ${burstMs} ms after ${lullMs / 1000} s of nothing, at ${rate} a second (open loop, 32 connections, 50 merchants), ${rounds} rounds; medians over the rounds (lowest–highest):`,
      '',
      ...lullTable(settings),
    ].join('\n'),
  );
}

runBench(main);

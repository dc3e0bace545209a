/**
 * The operations dashboard's cost on a large database: fills the read models
 * and work queues of ORDERS orders (default 1,000,000) spread over the last
 * DAYS days (default 7), straight with generate_series, and a log of
 * EVENTS events (default 5 per order) the projections have caught up with;
 * then sends the dashboard's queries, both windows, and prints each one's
 * EXPLAIN (ANALYZE, BUFFERS) and the time of the whole reply.
 *
 *   node -r ts-node/register/transpile-only test/bench/dashboard/dashboard-cost.ts
 *
 * ORDERS, DAYS, EVENTS, MERCHANTS set the shape; PLANS=1 prints every plan
 * in full; KEEP=1 keeps the database (its name is printed). It needs a
 * Postgres as the tests do (DATABASE_URL or PG*, default 127.0.0.1:5432) and
 * about 2 GB of disk at the defaults.
 */
import { Pool, QueryConfig } from 'pg';
import { fedProjections } from '../../../projections/all-projections';
import { projectionMigrations } from '../../../projections/projection-runner';
import { DashboardReader } from '../../../src/back-office/operations/dashboard.reader';
import { DashboardWindow } from '../../../src/back-office/operations/dashboard-window';
import { callbackMigrations } from '../../../src/callbacks';
import { eventStoreMigrations } from '../../../src/infrastructure/event-store/postgres-event-store.migrations';
import { PostgresEventStore } from '../../../src/infrastructure/event-store/postgres-event-store';
import { migrate } from '../../../src/infrastructure/postgres/migrations';
import { provisioningMigrations } from '../../../src/merchant-directory';
import { createTestDatabase } from '../../support/test-database';

const ORDERS = Number(process.env.ORDERS ?? 1_000_000);
const DAYS = Number(process.env.DAYS ?? 7);
const EVENTS = Number(process.env.EVENTS ?? ORDERS * 5);
const MERCHANTS = Number(process.env.MERCHANTS ?? 1000);
const RUNS = 10;

/** One statement the dashboard sent, as sent, and how long its reply took to come back. */
interface Sent {
  text: string;
  values: unknown[];
  ms?: number;
}

async function main(): Promise<void> {
  const db = await createTestDatabase('topup_dashboard_bench');
  const pool = db.pool;
  try {
    console.log(`database ${db.name}: ${ORDERS} orders over ${DAYS} days, ${MERCHANTS} merchants, ${EVENTS} events in the log`);
    await migrate(pool, [...eventStoreMigrations, ...projectionMigrations(fedProjections), ...provisioningMigrations, ...callbackMigrations]);
    await timed('fill', () => fill(pool));
    await timed('vacuum analyze', async () => {
      await pool.query('vacuum analyze');
    });
    const sizes = await pool.query<{ relname: string; rows: string; size: string }>(
      `select relname, reltuples::bigint::text as rows, pg_size_pretty(pg_total_relation_size(oid)) as size from pg_class
       where relname in ('es_events', 'rm_orders', 'rm_order_minutes', 'rm_upstream_latency', 'rm_upstream_sends', 'callback_deliveries',
                         'callback_attempts', 'callback_attempt_minutes', 'fulfilment_jobs', 'merchants', 'rm_wallets') order by relname`,
    );
    for (const row of sizes.rows) console.log(`  ${row.relname.padEnd(20)} ${row.rows.padStart(10)} rows ${row.size.padStart(9)}`);

    const sent: Sent[] = [];
    const recording = recordingPool(pool, sent);
    const store = new PostgresEventStore(recording, { connection: db.config, pollIntervalMs: 60_000 });
    const reader = new DashboardReader(recording, store);
    try {
      for (const window of ['1h', '24h'] as DashboardWindow[]) {
        sent.length = 0;
        const reply = await reader.read(window);
        const statements = [...sent];
        console.log(`\nwindow=${window}: ${statements.length} statements; ${reply.series.length} points`);
        const points = reply.series.filter((p) => p.orders.accepted > 0).length;
        console.log(
          `  points with orders: ${points}; low-balance merchants: ${reply.now.low_balance.total}; unknown-result orders: ${reply.now.reconciliation.unknown_result_orders}`,
        );
        for (const statement of statements) await explain(pool, statement);
        const times: number[] = [];
        sent.length = 0;
        for (let i = 0; i < RUNS; i++) {
          const start = process.hrtime.bigint();
          await reader.read(window);
          times.push(Number(process.hrtime.bigint() - start) / 1e6);
        }
        console.log(`  the whole reply, ${RUNS} runs after the plans: ${summary(times)}; each statement's reply as the service waits for it:`);
        for (const [tables, ms] of byStatement(sent)) console.log(`    ${tables}: ${summary(ms)}`);
      }
    } finally {
      await store.close();
    }
  } finally {
    if (process.env.KEEP === '1') {
      console.log(`kept database ${db.name}`);
      await pool.end();
    } else {
      await db.drop();
    }
  }
}

/** The pool, recording the text and values of every statement sent through it. */
function recordingPool(pool: Pool, sent: Sent[]): Pool {
  return new Proxy(pool, {
    get(target, property, receiver) {
      if (property !== 'query') return Reflect.get(target, property, receiver);
      return async (text: string | QueryConfig, values?: unknown[]) => {
        const config = typeof text === 'string' ? { text, values } : text;
        const entry: Sent = { text: config.text, values: config.values ?? [] };
        sent.push(entry);
        const start = process.hrtime.bigint();
        const result = await target.query(text as string, values);
        entry.ms = Number(process.hrtime.bigint() - start) / 1e6;
        return result;
      };
    },
  });
}

/** One statement's plan, run: its time and the buffers it touched, and its plan's nodes (in full with PLANS=1). */
async function explain(pool: Pool, { text, values }: Sent): Promise<void> {
  // Run once first: the plan is of a statement whose pages are in memory, as the dashboard's are when it is polled.
  await pool.query(text, values);
  const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${text}`, values);
  const lines = rows.map((row) => row['QUERY PLAN']);
  const time = lines.find((line) => line.startsWith('Execution Time'));
  const buffers = lines.find((line) => line.trim().startsWith('Buffers'))?.trim() ?? 'Buffers: none';
  const tables = tablesOf(text);
  console.log(`  - ${tables}: ${time}; ${buffers}`);
  const nodes = lines.filter((line) => /->|^\w/.test(line.trim()) && !/^(Planning|Execution|Buffers)/.test(line.trim()));
  const shown = process.env.PLANS === '1' ? lines : nodes.filter((line) => /Scan|Aggregate|Sort|Limit|Join|Nested|Result|Append/.test(line));
  for (const line of shown) console.log(`      ${line.replace(/\s+\(cost=[^)]*\)/, '').trimEnd()}`);
}

/** The tables a statement reads, to name it by. */
const tablesOf = (text: string) =>
  [...new Set([...text.matchAll(/\b(?:from|join)\s+([a-z][a-z_]+)/gi)].map((m) => m[1]))].filter((t) => t !== 'now').join(', ');

/** The times of the statements sent, by the tables each reads. */
function byStatement(sent: readonly Sent[]): Map<string, number[]> {
  const times = new Map<string, number[]>();
  for (const { text, ms } of sent) times.set(tablesOf(text), [...(times.get(tablesOf(text)) ?? []), ms ?? NaN]);
  return times;
}

/** The median and the slowest of some times, in milliseconds. */
function summary(times: number[]): string {
  const sorted = [...times].sort((a, b) => a - b);
  return `median ${sorted[Math.floor(sorted.length / 2)].toFixed(1)} ms, slowest ${sorted[sorted.length - 1].toFixed(1)} ms`;
}

async function timed(what: string, work: () => Promise<void>): Promise<void> {
  const start = Date.now();
  await work();
  console.log(`${what}: ${((Date.now() - start) / 1000).toFixed(1)} s`);
}

/**
 * The read models as the projections would leave them, roughly: orders
 * mostly delivered (2% failed, 1% refused at submit, 0.2% unknown and still
 * waiting for a clerk), a callback delivery per final order (5% acknowledged
 * at the second attempt; the last minute's pending), a job per accepted
 * order, the rollups of every minute, a tenth of the merchants with a
 * threshold and half of those under it, and the log the checkpoints stand at
 * the end of.
 */
async function fill(pool: Pool): Promise<void> {
  const span = `interval '${DAYS} days'`;
  const start = `date_trunc('minute', now()) - ${span}`;
  const steps = [
    `insert into merchants (merchant_id, name, currency, api_key, app_secret_enc, rate_limit_per_second, low_balance_threshold, created_by, updated_by)
     select 'mch_' || lpad(j::text, 16, '0'), 'Merchant ' || j, 'USD', 'ak_' || lpad(j::text, 32, '0'), '\\x00'::bytea, 100,
            case when j % 10 = 0 then 100000 end, 'bench', 'bench'
     from generate_series(0, ${MERCHANTS - 1}) j`,
    `insert into rm_wallets (merchant_id, currency, balance, frozen, available, revision, opened_at, updated_at)
     select 'mch_' || lpad(j::text, 16, '0'), 'USD', b, 0, b, 1000, now() - ${span}, now()
     from generate_series(0, ${MERCHANTS - 1}) j, lateral (select case when j % 20 = 0 then 5000 else 1000000000 end::bigint as b) x`,
    `insert into rm_orders (order_no, merchant_id, out_trade_no, attempt, stage, sku_id, account_id, account_fields, amount, currency, refusal_code,
                            upstream_attempts, fail_code, fail_reason, created_at, accepted_at, result_unknown_at, completed_at, updated_at)
     select 'T' || lpad(i::text, 12, '0'), 'mch_' || lpad((i % ${MERCHANTS})::text, 16, '0'), 'OUT-' || i, 1, stage, 'mlbb-86',
            (10000000 + i % 1000000)::text, '{"server_id": "1"}', 120, 'USD',
            case when stage = 'refused' then 'INSUFFICIENT_BALANCE' end, case when stage = 'refused' then 0 else 1 end,
            case when stage = 'failed' then 'INVALID_ACCOUNT' end, case when stage = 'failed' then 'no such account' end,
            at, case when stage <> 'refused' then at end, case when stage = 'unknown' then at + interval '10 s' end,
            case when stage in ('succeeded', 'failed') then at + interval '300 ms' end, at + interval '300 ms'
     from generate_series(1, ${ORDERS}) i,
          lateral (select ${start} + (i::float8 / ${ORDERS}) * ${span} as at,
                          case when i % 500 = 13 then 'unknown' when i % 100 = 21 then 'refused' when i % 50 = 7 then 'failed' else 'succeeded' end as stage) x`,
    `insert into rm_order_minutes (minute, accepted, refused, unknown, resolved, succeeded, failed, sent,
                                   answered_delivered, answered_refused, answered_unknown, answered_retried)
     select date_bin('1 minute', created_at, timestamptz '1970-01-01 00:00:00+00'), count(*) filter (where stage <> 'refused'),
            count(*) filter (where stage = 'refused'), count(*) filter (where stage = 'unknown'), 0, count(*) filter (where stage = 'succeeded'),
            count(*) filter (where stage = 'failed'), count(*) filter (where stage <> 'refused'), count(*) filter (where stage = 'succeeded'),
            count(*) filter (where stage = 'failed'), count(*) filter (where stage = 'unknown'), 0
     from rm_orders group by 1`,
    // The answers of each minute over seven buckets from 100 ms to 1.5 s, and the unknown ones at 10 s.
    `insert into rm_upstream_latency (minute, bucket, answers)
     select minute, b, greatest(1, (answered_delivered + answered_refused) / 7) from rm_order_minutes, generate_series(12, 18) b
     union all
     select minute, 24, answered_unknown from rm_order_minutes where answered_unknown > 0`,
    // No fulfilment jobs: every order here has ended, and the queue keeps only the work in flight.
    `insert into callback_deliveries (order_no, merchant_id, state, attempts_made, due_at, created_at)
     select order_no, merchant_id, case when completed_at > now() - interval '1 minute' then 'pending' when hashtext(order_no) % 2000 = 0 then 'exhausted'
            else 'acknowledged' end, case when hashtext(order_no) % 20 = 0 then 2 else 1 end, completed_at, completed_at
     from rm_orders where stage in ('succeeded', 'failed')`,
    `insert into callback_attempts (order_no, attempt, kind, started_at, url, status_code, latency_ms, acknowledged, sent_by)
     select d.order_no, a, 'scheduled', d.created_at + (a - 1) * interval '1 s', 'https://merchant.example/cb', case when a < d.attempts_made then 500 else 200 end,
            40, a = d.attempts_made and d.state = 'acknowledged', 'bench'
     from callback_deliveries d, generate_series(1, d.attempts_made) a`,
    `insert into callback_attempt_minutes (minute, sent_by, acknowledged, not_acknowledged)
     select date_bin('1 minute', started_at, timestamptz '1970-01-01 00:00:00+00'), case when hashtext(order_no) % 2 = 0 then 'instance-a' else 'instance-b' end,
            count(*) filter (where acknowledged), count(*) filter (where not acknowledged)
     from callback_attempts group by 1, 2`,
    `insert into es_events (stream_id, stream_revision, event_id, event_type, data, metadata, created_at)
     select 'order-T' || lpad((e / 5)::text, 12, '0'), e % 5, gen_random_uuid(), 'OrderSucceeded', '{"at": "2026-01-01T00:00:00.000+00:00"}', '{}',
            ${start} + (e::float8 / ${EVENTS}) * ${span}
     from generate_series(0, ${EVENTS - 1}) e`,
    `insert into projection_checkpoints (name, position_commit, position_prepare)
     select name, last.transaction_id::text::bigint, last.global_position
     from unnest(array[${fedProjections.map((p) => `'${p.name}'`).join(', ')}]) name,
          (select transaction_id, global_position from es_events order by transaction_id desc, global_position desc limit 1) last`,
  ];
  for (const step of steps) {
    const table = /insert into (\w+)/.exec(step)![1];
    await timed(`  ${table}`, async () => {
      await pool.query(step);
    });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

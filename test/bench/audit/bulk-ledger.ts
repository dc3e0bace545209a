/**
 * Builds a large ledger fast, straight into the event table and the read
 * models, in the exact format the service writes: wallet events carry their
 * hash chain (computed with the service's own chainHash), order events the
 * data the deciders put there, and every read-model row is what the
 * projections would have written. The real verifier must find it clean; the
 * benchmark checks that before it measures anything.
 *
 * Events are generated here and inserted in chunks through unnest() (one
 * statement per chunk), then the read models are derived with set-based SQL.
 */
import { Pool } from 'pg';
import { callbackScheduleProjection } from '../../../projections/callback-schedule.projection';
import { fulfilmentJobsProjection } from '../../../projections/fulfilment-jobs.projection';
import { orderMinutesProjection, UPSTREAM_LATENCY_BOUNDS_MS } from '../../../projections/order-minutes.projection';
import { ordersProjection } from '../../../projections/orders.projection';
import { WALLET_SNAPSHOT_INTERVAL, walletsProjection } from '../../../projections/wallets.projection';
import { deriveOrderNo } from '../../../src/ledger/order/order-number';
import { walletStream, orderStream } from '../../../src/ledger/streams';
import { isoTimestamp } from '../../../src/shared/clock';
import { chainHash, GENESIS_HASH } from '../../../src/shared/hash-chain';

export interface LedgerShape {
  /** Wallet events of the hot merchant's wallet (its statement lines, WalletOpened included). */
  hotMovements: number;
  /** Events in the whole log, the hot merchant's included. */
  totalEvents: number;
  /** Merchants besides the hot one. */
  merchants: number;
}

export interface BuiltLedger {
  hotMerchant: string;
  events: number;
  hotWalletEvents: number;
  hotOrders: number;
  orders: number;
  firstAt: Date;
  lastAt: Date;
}

interface Row {
  stream: string;
  revision: number;
  type: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  at: string;
}

type Outcome = 'succeeded' | 'failed' | 'unknown' | 'refused';

/** The mix of outcomes, by a merchant's order index: mostly delivered, some failed, refused or unknown. */
function outcomeOf(i: number): Outcome {
  if (i % 100 === 21) return 'refused';
  if (i % 500 === 13) return 'unknown';
  if (i % 50 === 7) return 'failed';
  return 'succeeded';
}

const WALLET_EVENTS: Record<Outcome, number> = { succeeded: 2, failed: 2, unknown: 1, refused: 0 };
const ORDER_EVENTS: Record<Outcome, number> = { succeeded: 5, failed: 5, unknown: 4, refused: 2 };
const OPENING_DEPOSIT = 10n ** 12n;
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const STEP_MS = 2;
const CHUNK = 10_000;

class MerchantLog {
  revision = -1;
  lastHash = GENESIS_HASH;
  orders = 0;
  deposits = 0;

  constructor(readonly merchantId: string) {}

  walletEvent(type: string, data: Record<string, unknown>, at: string): Row {
    const revision = ++this.revision;
    const stored = { ...data, at };
    const hash = chainHash(this.lastHash, revision, type, stored);
    const row = { stream: walletStream(this.merchantId), revision, type, data: stored, metadata: { prev_hash: this.lastHash, hash }, at };
    this.lastHash = hash;
    return row;
  }

  opening(at: () => string): Row[] {
    return [this.walletEvent('WalletOpened', { merchantId: this.merchantId, currency: 'USD' }, at()), this.deposit(at())];
  }

  deposit(at: string): Row {
    return this.walletEvent('FundsDeposited', { reference: `bench-${++this.deposits}`, amount: OPENING_DEPOSIT.toString(), by: 'bench' }, at);
  }

  /** One order's events, in the order the service appends them. */
  order(at: () => string): Row[] {
    const i = this.orders++;
    const outcome = outcomeOf(i);
    const outTradeNo = `B-${i}`;
    const orderNo = deriveOrderNo(this.merchantId, outTradeNo);
    const stream = orderStream(orderNo);
    let revision = 0;
    const orderEvent = (type: string, data: Record<string, unknown>): Row => {
      const when = at();
      return { stream, revision: revision++, type, data: { ...data, at: when }, metadata: {}, at: when };
    };
    const amount = String(100 + (i % 9) * 10);
    const hold = { orderNo, attempt: 1, amount };
    const placed = orderEvent('OrderPlaced', {
      orderNo,
      merchantId: this.merchantId,
      outTradeNo,
      skuId: 'bench-1',
      accountId: `${10_000_000 + i}`,
      accountFields: { server_id: '2001' },
      amount,
      currency: 'USD',
      attempt: 1,
    });
    if (outcome === 'refused') return [placed, orderEvent('OrderRefused', { attempt: 1, code: 'INSUFFICIENT_BALANCE' })];
    const rows = [
      placed,
      this.walletEvent('FundsFrozen', hold, at()),
      orderEvent('OrderAccepted', { attempt: 1 }),
      orderEvent('OrderSentUpstream', { upstreamAttempt: 1 }),
    ];
    if (outcome === 'unknown') return [...rows, orderEvent('OrderResultUnknown', { reason: 'timeout' })];
    if (outcome === 'failed') {
      const failure = { failCode: 'INVALID_ACCOUNT', failReason: 'no such account' };
      return [
        ...rows,
        orderEvent('OrderDeliveryFailed', failure),
        this.walletEvent('FrozenFundsReleased', { ...hold, reason: 'INVALID_ACCOUNT' }, at()),
        orderEvent('OrderFailed', failure),
      ];
    }
    return [...rows, orderEvent('OrderDeliveryConfirmed', {}), this.walletEvent('FrozenFundsDeducted', hold, at()), orderEvent('OrderSucceeded', {})];
  }
}

/** How many orders give a wallet `movements` events after its two opening ones; the remainder is made up by deposits. */
function ordersFor(movements: number): { orders: number; events: number; padding: number } {
  let walletEvents = 2;
  let events = 2;
  let orders = 0;
  while (walletEvents + WALLET_EVENTS[outcomeOf(orders)] <= movements) {
    walletEvents += WALLET_EVENTS[outcomeOf(orders)];
    events += WALLET_EVENTS[outcomeOf(orders)] + ORDER_EVENTS[outcomeOf(orders)];
    orders++;
  }
  return { orders, events: events + (movements - walletEvents), padding: movements - walletEvents };
}

/** Every event of the log in append order: the hot merchant's orders interleaved evenly with the others'. */
function* ledgerRows(shape: LedgerShape, hot: MerchantLog, others: MerchantLog[]): Generator<Row> {
  let tick = 0;
  const at = () => isoTimestamp(new Date(T0 + STEP_MS * tick++));
  const hotPlan = ordersFor(shape.hotMovements);
  let budget = shape.totalEvents - hotPlan.events - 2 * others.length;
  if (budget < 0)
    throw new Error(`a log of ${shape.totalEvents} events cannot hold a wallet of ${shape.hotMovements} movements and ${others.length} more merchants`);

  yield* hot.opening(at);
  for (const merchant of others) yield* merchant.opening(at);
  // Others' orders until the budget is spent; the hot merchant keeps pace so its orders spread over the whole log.
  const otherOrders = Math.floor(budget / 7);
  let otherDone = 0;
  while (hot.orders < hotPlan.orders || budget > 0) {
    const hotDue = hot.orders < hotPlan.orders && (budget <= 0 || hot.orders * otherOrders <= otherDone * hotPlan.orders);
    if (hotDue) {
      yield* hot.order(at);
      continue;
    }
    const merchant = others[otherDone++ % others.length];
    const needed = ORDER_EVENTS[outcomeOf(merchant.orders)] + WALLET_EVENTS[outcomeOf(merchant.orders)];
    if (budget >= needed) {
      budget -= needed;
      yield* merchant.order(at);
    } else {
      budget--;
      yield merchant.deposit(at());
    }
  }
  for (let i = 0; i < hotPlan.padding; i++) yield hot.deposit(at());
}

const INSERT_EVENTS = `
  insert into es_events (stream_id, stream_revision, event_id, event_type, data, metadata, created_at)
  select s, r, gen_random_uuid(), t, d::jsonb, m::jsonb, c
  from unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::timestamptz[]) with ordinality as u(s, r, t, d, m, c, n)
  order by n`;

async function insertChunk(pool: Pool, rows: Row[]): Promise<void> {
  await pool.query(INSERT_EVENTS, [
    rows.map((r) => r.stream),
    rows.map((r) => r.revision),
    rows.map((r) => r.type),
    rows.map((r) => JSON.stringify(r.data)),
    rows.map((r) => JSON.stringify(r.metadata)),
    rows.map((r) => r.at),
  ]);
}

/** Writes the log, then the read models the projections would have built from it, up to its last event. */
export async function buildLedger(pool: Pool, shape: LedgerShape, onProgress: (events: number) => void = () => undefined): Promise<BuiltLedger> {
  const hot = new MerchantLog('mch_bench_hot');
  const others = Array.from({ length: shape.merchants }, (_, i) => new MerchantLog(`mch_bench_${String(i + 1).padStart(3, '0')}`));
  let chunk: Row[] = [];
  let events = 0;
  let firstAt: string | undefined;
  let lastAt = '';
  for (const row of ledgerRows(shape, hot, others)) {
    firstAt ??= row.at;
    lastAt = row.at;
    chunk.push(row);
    if (chunk.length === CHUNK) {
      await insertChunk(pool, chunk);
      events += chunk.length;
      onProgress(events);
      chunk = [];
    }
  }
  if (chunk.length > 0) await insertChunk(pool, chunk);
  events += chunk.length;
  await deriveReadModels(pool);
  return {
    hotMerchant: hot.merchantId,
    events,
    hotWalletEvents: hot.revision + 1,
    hotOrders: hot.orders,
    orders: hot.orders + others.reduce((n, m) => n + m.orders, 0),
    firstAt: new Date(firstAt!),
    lastAt: new Date(lastAt),
  };
}

/** What the orders, wallets and order-minutes projections would hold after applying the whole log. */
async function deriveReadModels(pool: Pool): Promise<void> {
  await pool.query(`
    insert into rm_statement_lines (merchant_id, revision, position_commit, position_prepare, entry_type, order_no, attempt,
      reference, reason, amount, balance_after, frozen_after, available_after, occurred_at)
    select merchant_id, stream_revision, transaction_id::text::bigint, global_position, event_type, data->>'orderNo',
      (data->>'attempt')::int, data->>'reference', data->>'reason', amount, balance, frozen, balance - frozen, (data->>'at')::timestamptz
    from (
      select substr(stream_id, 8) as merchant_id, e.*, (data->>'amount')::bigint as amount,
        sum(case event_type when 'FundsDeposited' then (data->>'amount')::bigint when 'FrozenFundsDeducted' then -(data->>'amount')::bigint else 0 end)
          over (partition by stream_id order by stream_revision) as balance,
        sum(case event_type when 'FundsFrozen' then (data->>'amount')::bigint when 'WalletOpened' then 0 when 'FundsDeposited' then 0 else -(data->>'amount')::bigint end)
          over (partition by stream_id order by stream_revision) as frozen
      from es_events e where stream_id like 'wallet-%'
    ) moved
    where event_type <> 'WalletOpened'`);
  await pool.query(`
    insert into rm_wallets (merchant_id, currency, balance, frozen, available, revision, opened_at, updated_at)
    select o.merchant_id, o.data->>'currency', coalesce(l.balance_after, 0), coalesce(l.frozen_after, 0), coalesce(l.available_after, 0),
      coalesce(l.revision, 0), (o.data->>'at')::timestamptz, coalesce(l.occurred_at, (o.data->>'at')::timestamptz)
    from (select substr(stream_id, 8) as merchant_id, data from es_events where stream_id like 'wallet-%' and stream_revision = 0) o
    left join (select distinct on (merchant_id) * from rm_statement_lines order by merchant_id, revision desc) l using (merchant_id)`);
  await pool.query(`
    insert into rm_wallet_holds (merchant_id, order_no, attempt, amount, frozen_at)
    select merchant_id, order_no, attempt, amount, occurred_at from rm_statement_lines f
    where entry_type = 'FundsFrozen' and not exists (
      select 1 from rm_statement_lines c where c.merchant_id = f.merchant_id and c.order_no = f.order_no and c.attempt = f.attempt
        and c.entry_type in ('FrozenFundsDeducted', 'FrozenFundsReleased'))`);
  await pool.query(
    `insert into rm_wallet_snapshots (merchant_id, revision, position_commit, position_prepare, recorded_at, event_hash, balance, frozen)
     select l.merchant_id, l.revision, l.position_commit, l.position_prepare, e.created_at, e.metadata->>'hash', l.balance_after, l.frozen_after
     from rm_statement_lines l join es_events e on e.stream_id = 'wallet-' || l.merchant_id and e.stream_revision = l.revision
     where (l.revision + 1) % $1 = 0`,
    [WALLET_SNAPSHOT_INTERVAL],
  );
  await pool.query(`
    insert into rm_orders (order_no, merchant_id, out_trade_no, attempt, stage, sku_id, account_id, account_fields, amount, currency,
      refusal_code, upstream_attempts, fail_code, fail_reason, unknown_reason, created_at, accepted_at, result_unknown_at, completed_at, updated_at)
    select substr(p.stream_id, 7), p.data->>'merchantId', p.data->>'outTradeNo', (p.data->>'attempt')::int,
      case l.event_type when 'OrderRefused' then 'refused' when 'OrderResultUnknown' then 'unknown'
        when 'OrderSucceeded' then 'succeeded' when 'OrderFailed' then 'failed' end,
      p.data->>'skuId', p.data->>'accountId', p.data->'accountFields', (p.data->>'amount')::bigint, p.data->>'currency',
      l.data->>'code', case when l.event_type = 'OrderRefused' then 0 else 1 end, l.data->>'failCode', l.data->>'failReason', l.data->>'reason',
      (p.data->>'at')::timestamptz, a.at, case when l.event_type = 'OrderResultUnknown' then (l.data->>'at')::timestamptz end,
      case when l.event_type in ('OrderSucceeded', 'OrderFailed') then (l.data->>'at')::timestamptz end, (l.data->>'at')::timestamptz
    from es_events p
    join (select distinct on (stream_id) stream_id, event_type, data from es_events where stream_id like 'order-%'
          order by stream_id, stream_revision desc) l using (stream_id)
    left join (select stream_id, (data->>'at')::timestamptz as at from es_events where event_type = 'OrderAccepted') a using (stream_id)
    where p.stream_id like 'order-%' and p.stream_revision = 0`);
  // Every order here is sent once and answered at once: no retried sends, none left open.
  const minute = (at: string) => `date_bin('1 minute', (${at})::timestamptz, timestamptz '1970-01-01 00:00:00+00')`;
  await pool.query(`
    insert into rm_order_minutes (minute, accepted, refused, unknown, resolved, succeeded, failed, sent,
      answered_delivered, answered_refused, answered_unknown, answered_retried)
    select ${minute("data->>'at'")}, count(*) filter (where event_type = 'OrderAccepted'), count(*) filter (where event_type = 'OrderRefused'),
      count(*) filter (where event_type = 'OrderResultUnknown'), count(*) filter (where event_type = 'OrderResolved'),
      count(*) filter (where event_type = 'OrderSucceeded'), count(*) filter (where event_type = 'OrderFailed'),
      count(*) filter (where event_type = 'OrderSentUpstream'), count(*) filter (where event_type = 'OrderDeliveryConfirmed'),
      count(*) filter (where event_type = 'OrderDeliveryFailed'), count(*) filter (where event_type = 'OrderResultUnknown'), 0
    from es_events where stream_id like 'order-%' and event_type <> 'OrderPlaced' group by 1`);
  await pool.query(`
    insert into rm_upstream_latency (minute, bucket, answers)
    select ${minute('a.at')}, width_bucket(extract(epoch from (a.at)::timestamptz - (s.at)::timestamptz)::float8 * 1000,
                                           '{${UPSTREAM_LATENCY_BOUNDS_MS.join(',')}}'::float8[]), count(*)
    from (select stream_id, data->>'at' as at from es_events
          where event_type in ('OrderDeliveryConfirmed', 'OrderDeliveryFailed', 'OrderResultUnknown')) a
    join (select stream_id, data->>'at' as at from es_events where event_type = 'OrderSentUpstream') s using (stream_id)
    group by 1, 2`);
  // The read models are at the last event. The workflow feeds (fulfilment jobs, callbacks)
  // start after it too: nothing in a built ledger is to be sent anywhere.
  await pool.query(
    `insert into projection_checkpoints (name, position_commit, position_prepare)
     select name, transaction_id::text::bigint, global_position
     from (select transaction_id, global_position from es_events order by transaction_id desc, global_position desc limit 1) last,
       unnest($1::text[]) as name
     on conflict (name) do update set position_commit = excluded.position_commit, position_prepare = excluded.position_prepare`,
    [[ordersProjection, walletsProjection, orderMinutesProjection, fulfilmentJobsProjection, callbackScheduleProjection].map((p) => p.name)],
  );
  await pool.query('vacuum analyze');
}

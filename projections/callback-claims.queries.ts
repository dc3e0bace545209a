import { Pool } from 'pg';
import { OrderStage } from '../src/ledger/order/order.decider';

/**
 * The callback senders' claims on the callback schedule
 * (callback_deliveries): which due deliveries an instance leases, with the
 * order's row in the orders read model and the merchant's callback address,
 * and the attempts a claim writes down. The attempts' starts and results,
 * and hand-backs, are in callback-schedule.queries.ts.
 */

export interface ClaimedDelivery {
  order_no: string;
  /** The order's merchant when known: from the delivery row, or else from the orders read model. */
  merchant_id: string | null;
  attempts_made: number;
  max_attempts: number | null;
  manual_requested: boolean;
  /**
   * The order as the orders read model shows it, read with the claim: the
   * projection batch that scheduled the delivery made it final there. Null
   * when the read model has no row for it.
   */
  order: ReadModelOrder | null;
  /**
   * True when the claim also wrote the next attempt down (attempt
   * `attempts_made + 1`, see startAttempts): it does when it knows the
   * merchant and `order` shows the order final, and the merchant's current
   * callback address and key come with it.
   */
  started: boolean;
  recipient: RecipientRow | null;
}

/** The merchant's callback address and signing key as the claim read them (null when the merchant is not provisioned). */
export interface RecipientRow {
  api_key: string;
  app_secret_enc: Buffer;
  callback_url: string | null;
}

/** What a callback carries, as rm_orders holds it. */
export interface ReadModelOrder {
  merchant_id: string;
  out_trade_no: string;
  stage: OrderStage;
  /** Minor units. */
  amount: string;
  account_id: string;
  fail_code: string | null;
  fail_reason: string | null;
  /** Milliseconds since the epoch. */
  completed_ms: string | null;
}

export interface ClaimLimits {
  /** Deliveries claimed at most: the instance's free slots. */
  slots: number;
  /** Callbacks of one merchant in flight at most. */
  perMerchant: number;
  /** Callbacks in flight now, per merchant (a merchant not listed has none). */
  inFlight: ReadonlyMap<string, number>;
  leaseMs: number;
  instanceId: string;
  /** An attempt that never reports back is due again after the send timeout and the schedule's next delay (CONTRACT §2). */
  timeoutMs: number;
  retryDelaysMs: readonly number[];
}

/** Due deliveries a claim looks at first, per free slot: enough that a merchant with a long backlog seldom hides the others. */
const CANDIDATES_PER_SLOT = 4;

/**
 * The oldest due deliveries, `$1 * CANDIDATES_PER_SLOT` of them whoever
 * their merchants, each with its merchant (from its row, or else from the
 * orders read model) and that merchant's free slots. Bounded by the free
 * slots; `window_full` when there were as many as it takes.
 */
const OLDEST_DUE = `
       candidates as (
         select order_no, due_at, merchant_id from callback_deliveries
         where state = 'pending' and due_at <= now() and (lease_until is null or lease_until < now())
         order by due_at limit $1 * ${CANDIDATES_PER_SLOT}),
       due as (
         select c.order_no, c.due_at, m.merchant_id, $6 - coalesce(f.n, 0) as free
         from candidates c
         -- The order's row is read only when the delivery's has no merchant (a join would read it for every candidate).
         cross join lateral (select coalesce(c.merchant_id, (select o.merchant_id from rm_orders o where o.order_no = c.order_no)) as merchant_id) m
         left join unnest($4::text[], $5::int[]) as f(merchant_id, n) on f.merchant_id = m.merchant_id),
       window_full as (select (select count(*) from candidates) = $1 * ${CANDIDATES_PER_SLOT} as is_full)`;

/**
 * Each merchant's oldest due deliveries, as many as it has free slots:
 * bounded by the merchants with a pending delivery (a skip scan of the
 * index by merchant, one probe each) and the free slots, whatever the
 * backlog of the merchants whose slots are full. Deliveries with no
 * merchant on the row come from an index of their own.
 */
const EACH_MERCHANTS_OLDEST_DUE = `
       pending_merchants(merchant_id) as (
         (select merchant_id from callback_deliveries where state = 'pending' and merchant_id is not null order by merchant_id limit 1)
         union all
         select (select d.merchant_id from callback_deliveries d
                 where d.state = 'pending' and d.merchant_id > p.merchant_id order by d.merchant_id limit 1)
         from pending_merchants p where p.merchant_id is not null),
       with_free_slots as (
         select p.merchant_id, $6 - coalesce(f.n, 0) as free
         from pending_merchants p left join unnest($4::text[], $5::int[]) as f(merchant_id, n) on f.merchant_id = p.merchant_id
         where p.merchant_id is not null and $6 - coalesce(f.n, 0) > 0),
       due as (
         select d.order_no, d.due_at, m.merchant_id, m.free
         from with_free_slots m cross join lateral (
           -- The merchant's due deliveries as a range of the (merchant_id, due_at) index: with merchant_id = m.merchant_id
           -- the planner could walk the index by due time instead, through every other merchant's backlog.
           select order_no, due_at from callback_deliveries
           where (merchant_id, due_at) >= (m.merchant_id, '-infinity') and (merchant_id, due_at) <= (m.merchant_id, now())
             and state = 'pending' and (lease_until is null or lease_until < now())
           order by merchant_id, due_at limit m.free) d
         union all
         select d.order_no, d.due_at, o.merchant_id, $6 - coalesce(f.n, 0)
         from (select order_no, due_at from callback_deliveries
               where merchant_id is null and state = 'pending' and due_at <= now() and (lease_until is null or lease_until < now())
               order by due_at limit $1 * ${CANDIDATES_PER_SLOT}) d
         left join rm_orders o on o.order_no = d.order_no
         left join unnest($4::text[], $5::int[]) as f(merchant_id, n) on f.merchant_id = o.merchant_id),
       window_full as (select false as is_full)`;

/**
 * Leases the oldest due deliveries, at most as many of one merchant as it
 * has free slots. Without the cap a claim took a busy merchant's whole
 * backlog only to hand back all but a few, each with a read of the order's
 * stream and a statement of its own, claim after claim.
 *
 * A claim looks first at the oldest due deliveries, four per free slot
 * (OLDEST_DUE): with no backlog that is every delivery due, and the
 * cheapest look. When that window was full and the claim took fewer than
 * the free slots, merchants whose slots are full had filled it, and
 * others' deliveries may wait behind them: it claims again at once from
 * each merchant's own oldest due deliveries (EACH_MERCHANTS_OLDEST_DUE),
 * whose cost is bounded by the merchants with something pending, not by
 * the backlog. A claim that looked further down the due deliveries
 * instead passed over every delivery of the merchants whose slots were
 * full: once a slow minute left a backlog, each claim got slower, and at
 * 850 orders a second the callbacks fell to 30 a second while the backlog
 * grew.
 *
 * A delivery's merchant is written into its row by the projection batch
 * that schedules it, from the orders read model (which the same batch
 * brought up to date). A delivery with no merchant on its row (the read
 * model had no row for the order, or an acknowledged callback was put back
 * by hand) gets its merchant from the orders read model here, and the
 * claim writes it in.
 *
 * Where it knows the merchant and the orders read model shows the order
 * final (what the callback carries comes with the claim), the claim also
 * writes the next attempt down as startAttempts does (the count moved, the
 * fallback due time set, the attempt's row inserted with the merchant's
 * current callback URL) and returns the merchant's key: the attempt is
 * counted before it is sent, without two more statements and another
 * version of the delivery's row. Any other delivery is started by its
 * sender once it has read the order's events. Deliveries come oldest due
 * first, in each of the two claims.
 */
export async function claimDeliveries(pool: Pool, limits: ClaimLimits): Promise<ClaimedDelivery[]> {
  const first = await claimFrom(pool, 'callbacks-claim-oldest', OLDEST_DUE, limits);
  const slots = limits.slots - first.deliveries.length;
  if (!first.windowFull || slots === 0) return first.deliveries;
  const inFlight = new Map(limits.inFlight);
  for (const { merchant_id } of first.deliveries) if (merchant_id !== null) inFlight.set(merchant_id, (inFlight.get(merchant_id) ?? 0) + 1);
  const second = await claimFrom(pool, 'callbacks-claim-by-merchant', EACH_MERCHANTS_OLDEST_DUE, { ...limits, slots, inFlight });
  return [...first.deliveries, ...second.deliveries];
}

/** One claim from the candidates that `due` (with `window_full`) defines. */
async function claimFrom(pool: Pool, name: string, due: string, limits: ClaimLimits): Promise<{ deliveries: ClaimedDelivery[]; windowFull: boolean }> {
  const inFlight = [...limits.inFlight];
  const { rows } = await pool.query<ClaimRow>({
    name,
    text: `with recursive ${due},
       capped as (
         select order_no, merchant_id, due_at from (
           select due.*, row_number() over (partition by merchant_id order by due_at) as nth from due) r
         where merchant_id is null or nth <= free
         order by due_at limit $1),
       -- Locked in a CTE of its own, run once: as a subquery of the update's
       -- join it could be rescanned per row, and its limit not hold. It reads
       -- the row as it was: the update's returning sees the new one.
       locked as (
         select order_no, attempts_made, manual_requested from callback_deliveries
         where order_no in (select order_no from capped) and state = 'pending' and (lease_until is null or lease_until < now())
         for update skip locked),
       claimed as (
         update callback_deliveries d
         set lease_until = now() + make_interval(secs => $2::float8 / 1000), leased_by = $3, merchant_id = coalesce(d.merchant_id, c.merchant_id),
           attempts_made = d.attempts_made + s.starts::int,
           manual_requested = d.manual_requested and not s.starts,
           due_at = case when s.starts then now() + make_interval(secs => ($7::float8 + coalesce(($8::float8[])[d.attempts_made + 1], 0)) / 1000)
                         else d.due_at end
         from capped c join locked l on l.order_no = c.order_no
           left join rm_orders o on o.order_no = c.order_no
           -- Started here only when nothing stands between it and its send: the
           -- merchant known, and the callback's body in the read model.
           cross join lateral (select c.merchant_id is not null and o.completed_at is not null as starts) s
         where d.order_no = c.order_no
         returning d.order_no, d.merchant_id, l.attempts_made, d.max_attempts, l.manual_requested, s.starts, c.due_at as claimed_due_at,
           case when o.order_no is not null then json_build_object(
             'merchant_id', o.merchant_id, 'out_trade_no', o.out_trade_no, 'stage', o.stage, 'amount', o.amount::text,
             'account_id', o.account_id, 'fail_code', o.fail_code, 'fail_reason', o.fail_reason,
             'completed_ms', floor(extract(epoch from o.completed_at) * 1000)::bigint::text) end as order),
       recipients as (
         select k.order_no, r.api_key, r.app_secret_enc, r.callback_url
         from claimed k join merchants r on r.merchant_id = k.merchant_id
         where k.starts),
       started as (
         insert into callback_attempts (order_no, attempt, kind, started_at, url, sent_by)
         select k.order_no, k.attempts_made + 1, case when k.manual_requested then 'manual' else 'scheduled' end, now(), r.callback_url, $3
         from claimed k left join recipients r on r.order_no = k.order_no
         where k.starts
         on conflict do nothing
         returning order_no)
       -- One row with no delivery when nothing was claimed: window_full is wanted all the same.
       select k.order_no, k.merchant_id, k.attempts_made, k.max_attempts, k.manual_requested, k.order,
         s.order_no is not null as started, r.api_key, r.app_secret_enc, r.callback_url, w.is_full as window_full
       from window_full w
       left join claimed k on true
       left join started s on s.order_no = k.order_no
       left join recipients r on r.order_no = k.order_no
       order by k.claimed_due_at, k.order_no`,
    values: [
      limits.slots,
      limits.leaseMs,
      limits.instanceId,
      inFlight.map(([id]) => id),
      inFlight.map(([, n]) => n),
      limits.perMerchant,
      limits.timeoutMs,
      limits.retryDelaysMs,
    ],
  });
  return {
    deliveries: rows
      .filter((row) => row.order_no !== null)
      .map(({ api_key, app_secret_enc, callback_url, window_full: _, ...delivery }) => ({
        ...delivery,
        // api_key is never null in merchants: null here means no merchants row was read.
        recipient: api_key !== null ? { api_key, app_secret_enc: app_secret_enc!, callback_url } : null,
      })),
    windowFull: rows[0]?.window_full ?? false,
  };
}

type ClaimRow = Omit<ClaimedDelivery, 'recipient'> & { [K in keyof RecipientRow]: RecipientRow[K] | null } & { window_full: boolean };

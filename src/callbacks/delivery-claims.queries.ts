import { Pool } from 'pg';
import { OrderStage } from '../ledger/order/order.decider';

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
}

/** Due deliveries looked at per claim, per free slot: enough that a merchant with a long backlog does not hide the others. */
const CANDIDATES_PER_SLOT = 4;

/**
 * Leases the oldest due deliveries, at most as many of one merchant as it
 * has free slots. A delivery's merchant is known from its row after a first
 * attempt, and from the orders read model before (which the same projection
 * batch that scheduled the delivery brought up to date); the claim writes it
 * into the row. Without the cap a claim took a busy merchant's whole backlog
 * only to hand back all but a few, each with a read of the order's stream and
 * a statement of its own, claim after claim.
 */
export async function claimDeliveries(pool: Pool, limits: ClaimLimits): Promise<ClaimedDelivery[]> {
  const inFlight = [...limits.inFlight];
  const { rows } = await pool.query<ClaimedDelivery>({
    name: 'callbacks-claim',
    text: `with due as (
         select d.order_no, d.due_at, m.merchant_id, $6 - coalesce(f.n, 0) as free
         from callback_deliveries d
         left join rm_orders o on d.merchant_id is null and o.order_no = d.order_no
         cross join lateral (select coalesce(d.merchant_id, o.merchant_id) as merchant_id) m
         left join unnest($4::text[], $5::int[]) as f(merchant_id, n) on f.merchant_id = m.merchant_id
         where d.state = 'pending' and d.due_at <= now() and (d.lease_until is null or d.lease_until < now()) and $6 - coalesce(f.n, 0) > 0
         order by d.due_at
         limit $1 * ${CANDIDATES_PER_SLOT}),
       capped as (
         select order_no, merchant_id from (
           select due.*, row_number() over (partition by merchant_id order by due_at) as nth from due) r
         where merchant_id is null or nth <= free),
       -- Locked in a CTE of its own, run once: as a subquery of the update's
       -- join it could be rescanned per row, and its limit not hold.
       locked as (
         select order_no from callback_deliveries
         where order_no in (select order_no from capped) and state = 'pending' and (lease_until is null or lease_until < now())
         order by due_at limit $1
         for update skip locked)
       update callback_deliveries d
       set lease_until = now() + make_interval(secs => $2::float8 / 1000), leased_by = $3, merchant_id = coalesce(d.merchant_id, c.merchant_id)
       from capped c join locked l on l.order_no = c.order_no left join rm_orders o on o.order_no = c.order_no
       where d.order_no = c.order_no
       returning d.order_no, d.merchant_id, d.attempts_made, d.max_attempts, d.manual_requested,
         case when o.order_no is not null then json_build_object(
           'merchant_id', o.merchant_id, 'out_trade_no', o.out_trade_no, 'stage', o.stage, 'amount', o.amount::text,
           'account_id', o.account_id, 'fail_code', o.fail_code, 'fail_reason', o.fail_reason,
           'completed_ms', floor(extract(epoch from o.completed_at) * 1000)::bigint::text) end as order`,
    values: [limits.slots, limits.leaseMs, limits.instanceId, inFlight.map(([id]) => id), inFlight.map(([, n]) => n), limits.perMerchant],
  });
  return rows;
}

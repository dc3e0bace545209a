import { Pool } from 'pg';
import { MINUTE_COUNTS, MinuteCount } from './order-minutes.projection';

/**
 * Every read of the per-minute rollups (rm_order_minutes,
 * rm_upstream_latency) outside the projection that writes them: the
 * operations dashboard's series. Each reads a window's rows by their primary
 * key (minute first) and sums them into slots of `stepSeconds`, aligned on
 * the Unix epoch: a day of minutes is 1,440 rows at most, whatever the
 * number of orders.
 */

/** The counts of one slot, by column of rm_order_minutes. */
export type MinuteSlotRow = { slot: Date } & Record<MinuteCount, number>;

const SLOT = `date_bin(make_interval(secs => $3), minute, timestamptz '1970-01-01 00:00:00+00')`;

/** The slots in [from, to) that saw anything, in order. */
export async function minuteSlots(pool: Pool, from: Date, to: Date, stepSeconds: number): Promise<MinuteSlotRow[]> {
  const { rows } = await pool.query<MinuteSlotRow>(
    `select ${SLOT} as slot, ${MINUTE_COUNTS.map((count) => `sum(${count})::int as ${count}`).join(', ')}
     from rm_order_minutes where minute >= $1 and minute < $2 group by 1 order by 1`,
    [from, to, stepSeconds],
  );
  return rows;
}

/** The upstream's answers in [from, to) by slot and latency bucket (UPSTREAM_LATENCY_BOUNDS_MS). */
export async function latencySlots(pool: Pool, from: Date, to: Date, stepSeconds: number): Promise<{ slot: Date; bucket: number; answers: number }[]> {
  const { rows } = await pool.query<{ slot: Date; bucket: number; answers: number }>(
    `select ${SLOT} as slot, bucket, sum(answers)::int as answers
     from rm_upstream_latency where minute >= $1 and minute < $2 group by 1, 2 order by 1, 2`,
    [from, to, stepSeconds],
  );
  return rows;
}

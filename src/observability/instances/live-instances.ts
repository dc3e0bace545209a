import { Pool } from 'pg';

/** A running instance and its upstream slots: FULFILMENT_CONCURRENCY, held at its last write, and held on average between its last two. */
export interface LiveInstance {
  instance: string;
  started_at: Date;
  seen_at: Date;
  /** Its clock minus the database's at its last write, in ms; null when a version that does not measure it wrote the row. */
  clock_offset_ms: number | null;
  fulfilment: { slots: number; in_flight: number; held: number };
  callbacks: { slots: number };
}

/**
 * The instances whose row was written within `withinMs` (three heartbeats:
 * one missed write does not hide an instance), oldest first.
 */
export async function liveInstances(pool: Pool, withinMs: number): Promise<LiveInstance[]> {
  const { rows } = await pool.query<{
    instance_id: string;
    started_at: Date;
    seen_at: Date;
    clock_offset_ms: number | null;
    fulfilment_slots: number;
    fulfilment_in_flight: number;
    fulfilment_held: number;
    callback_slots: number;
  }>(
    `select instance_id, started_at, seen_at, clock_offset_ms, fulfilment_slots, fulfilment_in_flight, fulfilment_held, callback_slots
       from service_instances where seen_at >= now() - make_interval(secs => $1::float8 / 1000)
      order by started_at, instance_id`,
    [withinMs],
  );
  return rows.map((r) => ({
    instance: r.instance_id,
    started_at: r.started_at,
    seen_at: r.seen_at,
    clock_offset_ms: r.clock_offset_ms === null ? null : Math.round(r.clock_offset_ms),
    fulfilment: { slots: r.fulfilment_slots, in_flight: r.fulfilment_in_flight, held: r.fulfilment_held },
    callbacks: { slots: r.callback_slots },
  }));
}

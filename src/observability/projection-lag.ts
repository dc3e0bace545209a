import type { Pool } from 'pg';
import { EventStore, GlobalPosition, START } from '../ledger/ports/event-store.port';
import { checkpointRows } from '../../projections/checkpoints';

export interface ProjectionLag {
  projection: string;
  /** Events after its checkpoint, counted up to the limit asked for. */
  events: number;
  /** Age of the oldest event it has not applied; 0 when caught up. */
  seconds: number;
}

/**
 * How far each projection is behind the log, from its checkpoint in Postgres
 * (whichever instance runs it) and the events after it. Projections at the
 * same checkpoint share one read; a caught-up one costs an empty read.
 */
export async function projectionLags(pool: Pool, store: EventStore, names: readonly string[], countUpTo: number): Promise<ProjectionLag[]> {
  const checkpoints = new Map((await checkpointRows(pool, names)).map((row) => [row.name, { commit: BigInt(row.c), prepare: BigInt(row.p) }]));
  const reads = new Map<string, Promise<{ events: number; seconds: number }>>();
  const behind = (position: GlobalPosition) => {
    const key = `${position.commit}/${position.prepare}`;
    if (!reads.has(key)) {
      reads.set(
        key,
        store.readAll(position, countUpTo, { upToHorizon: true }).then((events) => ({
          events: events.length,
          seconds: events.length === 0 ? 0 : Math.max(0, (Date.now() - events[0].createdAt.getTime()) / 1000),
        })),
      );
    }
    return reads.get(key)!;
  };
  return Promise.all(names.map(async (projection) => ({ projection, ...(await behind(checkpoints.get(projection) ?? START)) })));
}

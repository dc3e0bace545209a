import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { EVENT_STORE, EventStore, formatPosition } from '../../ledger/ports/event-store.port';
import { isoTimestamp } from '../../shared/clock';
import { oldestUnknownResult } from '../../../projections/orders.queries';
import { callbackBacklog } from '../../../projections/callback-log.queries';
import { fulfilmentBacklog } from '../../../projections/fulfilment-jobs.queries';
import { allCheckpointRows } from '../../../projections/checkpoints';
import { allProjections } from '../../../projections/all-projections';
import { AppConfig } from '../../config/config';
import { APP_CONFIG, PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { LiveInstance, liveInstances } from '../../observability';

/** The read models POST /admin/v1/projections/rebuild takes: the workflow queues are fed from the log too, but are not rebuilt. */
const REBUILDABLE = new Set(allProjections.map((p) => p.name));

/** Lag is counted event by event up to this many; beyond it the reply says "at least". */
const LAG_COUNT_LIMIT = 10_000;

/** A read model's place in the log and how far behind it is. */
export interface ProjectionStatusView {
  name: string;
  position: string;
  /** Counted up to LAG_COUNT_LIMIT; events_behind_at_least says the count stopped there. */
  events_behind: number;
  events_behind_at_least: boolean;
  updated_at: string;
  /** Whether the rebuild route takes it (and a rebuild of all of them includes it). */
  rebuildable: boolean;
}

/** A running instance and its upstream slots (LiveInstance), its times as the API writes them. */
export type InstanceStatusView = Omit<LiveInstance, 'started_at' | 'seen_at'> & { started_at: string; seen_at: string };

/** The service's state at a glance. */
export interface StatusView {
  at: string;
  /** The instances that wrote their row within three heartbeats. */
  instances: InstanceStatusView[];
  projections: ProjectionStatusView[];
  fulfilment: { pending: number; retrying: number; oldest_due_at: string | null };
  callbacks: { pending: number; exhausted: number; oldest_due_at: string | null };
  reconciliation: {
    unknown_result_orders: number;
    oldest: { order_no: string; merchant_id: string; result_unknown_at: string; age_seconds: number } | null;
  };
}

/**
 * What an operator checks first: is every read model keeping up with the
 * log, is work piling up (fulfilment, callbacks), and how long has the oldest
 * unknown-result order waited for a person. Read from the shared tables, so
 * every instance gives the same answer.
 */
@Injectable()
export class StatusReader {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'instanceHeartbeatMs'>,
  ) {}

  async current(): Promise<StatusView> {
    const [instances, checkpoints, fulfilment, callbacks, oldest] = await Promise.all([
      liveInstances(this.pool, 3 * this.config.instanceHeartbeatMs),
      allCheckpointRows(this.pool),
      fulfilmentBacklog(this.pool),
      callbackBacklog(this.pool),
      oldestUnknownResult(this.pool),
    ]);
    const projections = await Promise.all(
      checkpoints.map(async (row) => {
        const behind = (await this.store.readAll({ commit: BigInt(row.c), prepare: BigInt(row.p) }, LAG_COUNT_LIMIT + 1, { upToHorizon: true })).length;
        return {
          name: row.name,
          position: formatPosition({ commit: BigInt(row.c), prepare: BigInt(row.p) }),
          events_behind: Math.min(behind, LAG_COUNT_LIMIT),
          events_behind_at_least: behind > LAG_COUNT_LIMIT,
          updated_at: isoTimestamp(row.updated_at),
          rebuildable: REBUILDABLE.has(row.name),
        };
      }),
    );
    return {
      at: isoTimestamp(),
      instances: instances.map((i) => ({
        ...i,
        started_at: isoTimestamp(i.started_at),
        seen_at: isoTimestamp(i.seen_at),
        fulfilment: { ...i.fulfilment, held: Math.round(i.fulfilment.held * 10) / 10 },
      })),
      projections,
      fulfilment: { pending: fulfilment.pending, retrying: fulfilment.retrying, oldest_due_at: time(fulfilment.oldest) },
      callbacks: { pending: callbacks.pending, exhausted: callbacks.exhausted, oldest_due_at: time(callbacks.oldest) },
      reconciliation: {
        unknown_result_orders: oldest?.total ?? 0,
        oldest: oldest
          ? {
              order_no: oldest.order_no,
              merchant_id: oldest.merchant_id,
              result_unknown_at: isoTimestamp(oldest.result_unknown_at),
              age_seconds: oldest.age_seconds,
            }
          : null,
      },
    };
  }
}

const time = (date: Date | null) => (date ? isoTimestamp(date) : null);

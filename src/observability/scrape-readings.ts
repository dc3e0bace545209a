import type { Pool } from 'pg';
import { EventStore } from '../ledger/ports/event-store.port';
import { Metrics } from '../infrastructure/metrics/metrics';
import { projectionLags } from './projection-lag';
import { CALLBACK_BACKLOG_COLUMNS, CallbackBacklogColumns } from '../../projections/callback-log.queries';
import { FULFILMENT_BACKLOG_COLUMNS, FulfilmentBacklogColumns } from '../../projections/fulfilment-jobs.queries';
import { lowBalanceFlags } from '../../projections/wallets.queries';
import type { IntakeGuard } from '../merchant-api';

/** Projection lag is counted up to this many events: enough to tell a hiccup from an outage, cheap to read. */
const LAG_COUNT_LIMIT = 10_000;

/**
 * The gauges read from Postgres when /metrics is scraped: two indexed counts
 * of unfinished work, one read of the log per distinct checkpoint, the
 * wallets of the merchants with a low-balance threshold, and the backlog
 * policy's reading of the fulfilment queue.
 */
export function registerScrapeReadings(
  metrics: Metrics,
  pool: Pool,
  store: EventStore,
  projections: readonly string[],
  intake?: Pick<IntakeGuard, 'status'>,
): void {
  if (intake) {
    metrics.readAtScrape(async () => {
      const status = await intake.status();
      metrics.intakeWaiting.set(status.waiting);
      metrics.intakeOldestWait.set(status.oldestWaitS);
      metrics.intakeShedding.set(status.shedding ? 1 : 0);
    });
  }
  metrics.readAtScrape(async () => {
    const { rows } = await pool.query<FulfilmentBacklogColumns & CallbackBacklogColumns>(`select ${FULFILMENT_BACKLOG_COLUMNS}, ${CALLBACK_BACKLOG_COLUMNS}`);
    const row = rows[0];
    metrics.fulfilmentBacklog.set(Number(row.jobs));
    metrics.fulfilmentOldestAge.set(Math.max(0, row.jobs_age ?? 0));
    metrics.callbackBacklog.set(Number(row.callbacks));
    metrics.callbackOldestAge.set(Math.max(0, row.callbacks_age ?? 0));
  });
  metrics.readAtScrape(async () => {
    const flags = await lowBalanceFlags(pool);
    // A merchant whose threshold was removed leaves the gauge, rather than keeping its last value.
    metrics.merchantLowBalance.reset();
    for (const { merchant_id, low } of flags) metrics.merchantLowBalance.set({ merchant_id }, low ? 1 : 0);
  });
  metrics.readAtScrape(async () => {
    for (const lag of await projectionLags(pool, store, projections, LAG_COUNT_LIMIT)) {
      metrics.projectionLagEvents.set({ projection: lag.projection }, lag.events);
      metrics.projectionLagSeconds.set({ projection: lag.projection }, lag.seconds);
    }
  });
}

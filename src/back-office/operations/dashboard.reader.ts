import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { EVENT_STORE, EventStore } from '../../ledger/ports/event-store.port';
import { isoTimestamp } from '../../shared/clock';
import { formatAmount } from '../../shared/money';
import { projectionLags } from '../../observability';
import { fedProjections } from '../../../projections/all-projections';
import { latencySlots, MinuteSlotRow, minuteSlots } from '../../../projections/order-minutes.queries';
import {
  CALLBACK_BACKLOG_COLUMNS,
  CALLBACK_EXHAUSTED_COLUMN,
  CallbackBacklogColumns,
  CallbackExhaustedColumn,
  callbackAttemptSlots,
} from '../../../projections/callback-log.queries';
import { FULFILMENT_BACKLOG_COLUMNS, FulfilmentBacklogColumns } from '../../../projections/fulfilment-jobs.queries';
import { UNKNOWN_QUEUE_COLUMNS, UnknownQueueColumns } from '../../../projections/orders.queries';
import { lowBalanceMerchants } from '../../../projections/wallets.queries';
import { DashboardWindow, windowSlots } from './dashboard-window';
import type { DashboardView } from './dashboard.view';
import { emptyHistogram, latencyQuantile } from './latency-percentiles';

/** Lag is counted event by event up to this many, as the metrics count it. */
const LAG_COUNT_LIMIT = 10_000;
/** Merchants listed under their threshold at most; `total` counts them all. */
const LOW_BALANCE_LISTED = 100;

type QueueColumns = FulfilmentBacklogColumns & CallbackBacklogColumns & CallbackExhaustedColumn & UnknownQueueColumns;

/**
 * The operations dashboard's figures: series over the window from the
 * per-minute rollups (orders by outcome, the upstream's sends, answers and
 * latency; the callbacks' results), and the queues as they are now.
 * Six statements, sent at once on separate connections, each reading a
 * window's rows or a queue's by an index; one read of the log per distinct
 * projection checkpoint, empty when the projections are caught up. None
 * reads the orders or the log whole, so the cost does not grow with them.
 */
@Injectable()
export class DashboardReader {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  async read(window: DashboardWindow, now = new Date()): Promise<DashboardView> {
    const slots = windowSlots(window, now);
    const { from, to, stepSeconds } = slots;
    const [minutes, latency, callbacks, queues, lowBalance, lags] = await Promise.all([
      minuteSlots(this.pool, from, to, stepSeconds),
      latencySlots(this.pool, from, to, stepSeconds),
      callbackAttemptSlots(this.pool, from, to, stepSeconds),
      this.queues(),
      lowBalanceMerchants(this.pool, LOW_BALANCE_LISTED),
      projectionLags(
        this.pool,
        this.store,
        fedProjections.map((p) => p.name),
        LAG_COUNT_LIMIT,
      ),
    ]);
    const minutesAt = new Map(minutes.map((row) => [row.slot.getTime(), row]));
    const callbacksAt = new Map(callbacks.map((row) => [row.slot.getTime(), row]));
    const histograms = new Map<number, number[]>();
    for (const { slot, bucket, answers } of latency) {
      const counts = histograms.get(slot.getTime()) ?? emptyHistogram();
      counts[bucket] = answers;
      histograms.set(slot.getTime(), counts);
    }
    return {
      at: isoTimestamp(now),
      window,
      step_seconds: stepSeconds,
      from: isoTimestamp(from),
      to: isoTimestamp(to),
      series: slots.starts.map((start) => {
        const key = start.getTime();
        const histogram = histograms.get(key) ?? emptyHistogram();
        const results = callbacksAt.get(key);
        const finished = results ? results.acknowledged + results.not_acknowledged : 0;
        return {
          at: isoTimestamp(start),
          orders: ordersOf(minutesAt.get(key)),
          upstream: { ...upstreamOf(minutesAt.get(key)), latency_ms: { p50: latencyQuantile(histogram, 0.5), p99: latencyQuantile(histogram, 0.99) } },
          callbacks: {
            acknowledged: results?.acknowledged ?? 0,
            not_acknowledged: results?.not_acknowledged ?? 0,
            acknowledged_ratio: results && finished > 0 ? Math.round((results.acknowledged / finished) * 1000) / 1000 : null,
          },
        };
      }),
      now: {
        projections: lags.map((lag) => ({
          name: lag.projection,
          events_behind: lag.events,
          events_behind_at_least: lag.events >= LAG_COUNT_LIMIT,
          lag_seconds: Math.round(lag.seconds * 1000) / 1000,
        })),
        fulfilment: { pending: Number(queues.jobs), oldest_age_seconds: age(queues.jobs_age) },
        callbacks: { pending: Number(queues.callbacks), exhausted: Number(queues.callbacks_exhausted), oldest_pending_age_seconds: age(queues.callbacks_age) },
        reconciliation: {
          unknown_result_orders: Number(queues.unknown_orders),
          oldest_age_seconds: age(queues.unknown_oldest_age),
          oldest_order_no: queues.unknown_oldest_no,
        },
        low_balance: {
          total: lowBalance.total,
          merchants: lowBalance.rows.map((row) => ({
            merchant_id: row.merchant_id,
            name: row.name,
            currency: row.currency,
            available_balance: formatAmount(BigInt(row.available)),
            low_balance_threshold: formatAmount(BigInt(row.threshold)),
          })),
        },
      },
    };
  }

  /** The work queues in one statement: each owner's columns, from its partial index. */
  private async queues(): Promise<QueueColumns> {
    const { rows } = await this.pool.query<QueueColumns>(
      `select ${FULFILMENT_BACKLOG_COLUMNS}, ${CALLBACK_BACKLOG_COLUMNS}, ${CALLBACK_EXHAUSTED_COLUMN}, ${UNKNOWN_QUEUE_COLUMNS}`,
    );
    return rows[0];
  }
}

function ordersOf(row: MinuteSlotRow | undefined) {
  return {
    accepted: row?.accepted ?? 0,
    success: row?.succeeded ?? 0,
    failed: row?.failed ?? 0,
    unknown: row?.unknown ?? 0,
    refused: row?.refused ?? 0,
    resolved: row?.resolved ?? 0,
  };
}

function upstreamOf(row: MinuteSlotRow | undefined) {
  return {
    sent: row?.sent ?? 0,
    delivered: row?.answered_delivered ?? 0,
    refused: row?.answered_refused ?? 0,
    unknown: row?.answered_unknown ?? 0,
    retried: row?.answered_retried ?? 0,
  };
}

/** An age in whole seconds, never below 0 (clocks of two instances); null when the queue is empty. */
const age = (seconds: number | null) => (seconds === null ? null : Math.max(0, Math.round(seconds)));

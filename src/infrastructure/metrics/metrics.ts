import type { Pool } from 'pg';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { SlotTime } from './slot-time';

export const METRICS = Symbol('Metrics');

/** Gauges read at scrape time (backlogs, lag): one function, called once per scrape. */
export type ScrapeTimeReading = () => Promise<void>;

/**
 * The service's Prometheus metrics, in a registry of its own (not prom-client's
 * global one), so that two services in one process keep separate counts.
 * Counters and histograms are updated where things happen; the gauges that
 * need SQL are read when /metrics is scraped.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly readings: ScrapeTimeReading[] = [];
  private readonly pools = new Map<string, Pool>();

  readonly httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'From a request arriving to its reply sent, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly httpClientErrors = new Counter({
    name: 'http_client_errors_total',
    help: 'Connections that went wrong on the client side (malformed HTTP, timeouts, abandoned requests), by kind',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly submits = new Counter({
    name: 'topup_submits_total',
    help: 'Merchant submits by outcome: ACCEPTED, DUPLICATE, or the refusal code',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly ordersFinal = new Counter({
    name: 'topup_orders_final_total',
    help: 'Orders that reached a final state through this instance, by status and fail code',
    labelNames: ['status', 'fail_code'] as const,
    registers: [this.registry],
  });
  readonly upstreamRequests = new Counter({
    name: 'topup_upstream_requests_total',
    help: 'Top-up requests this instance sent to the upstream, by outcome',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly callbackAttempts = new Counter({
    name: 'topup_callback_attempts_total',
    help: 'Callback attempts sent by this instance, by outcome',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly appendDuration = new Histogram({
    name: 'event_store_append_duration_seconds',
    help: 'From an append being asked of the event store to its commit (grouped appends included)',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers: [this.registry],
  });
  readonly walletBatchSize = new Histogram({
    name: 'wallet_batch_size',
    help: 'Wallet commands decided together and written as one append',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 500],
    registers: [this.registry],
  });
  readonly walletConflicts = new Counter({
    name: 'wallet_append_conflicts_total',
    help: "Wallet batches whose append lost to another instance's and were decided again on its events",
    registers: [this.registry],
  });
  readonly walletLoads = new Histogram({
    name: 'wallet_load_seconds',
    help: "Wallets read whole: a wallet's first command after a start (or after the writer let it go), and the start-up load",
    buckets: [0.005, 0.025, 0.1, 0.5, 1, 5, 30],
    registers: [this.registry],
  });
  readonly walletLoadEvents = new Counter({
    name: 'wallet_load_events_total',
    help: 'Events replayed by the wallets read whole',
    registers: [this.registry],
  });
  /** Set at each heartbeat (instance-heartbeat.ts): instances whose clocks differ by a second count merchants' rate windows apart. */
  readonly clockOffset = this.gauge(
    'topup_clock_offset_seconds',
    "This instance's clock minus the database's, measured at its last heartbeat (negative: behind)",
  );
  /** Set once: the upstream slots (FULFILMENT_CONCURRENCY) beside the ones in use, so a scrape tells which bounds fulfilment. */
  readonly fulfilmentSlots = this.gauge(
    'topup_fulfilment_slots',
    "This instance's upstream slots (FULFILMENT_CONCURRENCY): top-ups it has at the upstream at once at most",
  );
  /**
   * The slots' use, told by the fulfilment worker's upstream slots: the two
   * metrics below (set by a scrape-time reading) and the status page's
   * instances (service_instances) read it, the slots still held counted up
   * to the moment of reading.
   */
  readonly fulfilmentSlotTime = new SlotTime();
  readonly fulfilmentInFlight = this.gauge(
    'topup_fulfilment_in_flight',
    'Top-ups this instance has at the upstream now, each holding one of its upstream slots from recording the send to the answer',
  );
  readonly fulfilmentSlotSeconds = new Counter({
    name: 'topup_fulfilment_slot_seconds_total',
    help: 'Seconds the upstream slots were held, summed over the slots: its rate is the mean number in use',
    registers: [this.registry],
  });
  readonly fulfilmentBacklog = this.gauge('topup_fulfilment_backlog', 'Fulfilment jobs not yet done (due, waiting to retry, or in flight)');
  readonly fulfilmentOldestAge = this.gauge('topup_fulfilment_oldest_job_age_seconds', 'Age of the oldest fulfilment job not yet done (0 when none)');
  readonly intakeWaiting = this.gauge(
    'topup_intake_waiting_orders',
    'Orders due for fulfilment and not yet taken by a worker (counted up to INTAKE_MAX_WAITING + 1)',
  );
  readonly intakeOldestWait = this.gauge('topup_intake_oldest_wait_seconds', 'How long the longest-waiting of them has waited for a worker');
  readonly intakeShedding = this.gauge('topup_intake_shedding', '1 while new submits are refused (503 SERVICE_BUSY) by the backlog policy, else 0');
  readonly callbackBacklog = this.gauge('topup_callback_backlog', 'Callbacks not yet acknowledged that have attempts left');
  readonly callbackOldestAge = this.gauge(
    'topup_callback_oldest_age_seconds',
    'Age of the oldest callback not yet acknowledged that has attempts left (0 when none)',
  );
  readonly projectionLagEvents = this.gauge('projection_lag_events', 'Events in the log that a projection has not applied yet (counted up to 10000)', [
    'projection',
  ]);
  readonly projectionLagSeconds = this.gauge('projection_lag_seconds', 'Age of the oldest event a projection has not applied yet (0 when it is caught up)', [
    'projection',
  ]);
  readonly merchantLowBalance = this.gauge(
    'topup_merchant_low_balance',
    "Merchants with a low-balance threshold: 1 while the wallet's available balance is under it, else 0",
    ['merchant_id'],
  );
  readonly databaseWaits = new Counter({
    name: 'database_outage_waits_total',
    help: 'Failures waited out while the database did not answer (DATABASE_WAIT_MS): a connection not made, or a request run again',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  readonly scrapeErrors = new Counter({
    name: 'metrics_scrape_errors_total',
    help: 'Scrape-time readings that failed (the gauges they feed keep their last value)',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.readAtScrape(async () => {
      this.fulfilmentInFlight.set(this.fulfilmentSlotTime.held);
      this.fulfilmentSlotSeconds.reset();
      this.fulfilmentSlotSeconds.inc(this.fulfilmentSlotTime.seconds());
    });
    const pools = this.pools;
    new Gauge({
      name: 'pg_pool_connections',
      help: 'Postgres pool connections by pool and state: idle, in use, and requests waiting for one',
      labelNames: ['pool', 'state'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [name, pool] of pools) {
          this.set({ pool: name, state: 'idle' }, pool.idleCount);
          this.set({ pool: name, state: 'in_use' }, pool.totalCount - pool.idleCount);
          this.set({ pool: name, state: 'waiting' }, pool.waitingCount);
        }
      },
    });
  }

  watchPool(name: string, pool: Pool): void {
    this.pools.set(name, pool);
  }

  /** Registers a reading that refreshes gauges when /metrics is scraped. */
  readAtScrape(reading: ScrapeTimeReading): void {
    this.readings.push(reading);
  }

  /** The exposition text: scrape-time readings first, each failing on its own. */
  async scrape(): Promise<string> {
    await Promise.all(this.readings.map((read) => read().catch(() => this.scrapeErrors.inc())));
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private gauge(name: string, help: string, labelNames: string[] = []): Gauge<string> {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }
}

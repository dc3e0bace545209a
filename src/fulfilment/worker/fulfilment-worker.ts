import { CommandBus } from '@nestjs/cqrs';
import { Pool } from 'pg';
import { EventStore } from '../../ledger/ports/event-store.port';
import { Loaded, loadAggregate } from '../../ledger/command-handling';
import { orderDecider, OrderState } from '../../ledger/order/order.decider';
import { CommandRefusedError } from '../../shared/command-refused';
import { orderStream } from '../../ledger/streams';
import { formatAmount } from '../../shared/money';
import { DispatchedWorker, JobDispatcher } from '../../infrastructure/jobs/job-dispatcher';
import { SlotListener, Slots } from '../../infrastructure/jobs/slots';
import { StatementBatcher } from '../../infrastructure/postgres/statement-batcher';
import { SkuRoutes } from '../../merchant-directory';
import { UpstreamOutcome, UpstreamProvider } from '../upstream/upstream.port';
import { MarkResultUnknown } from '../../ledger/commands/mark-result-unknown/mark-result-unknown.command';
import { RecordUpstreamAttempt } from '../../ledger/commands/record-upstream-attempt/record-upstream-attempt.command';
import { ReleaseFunds } from '../../ledger/commands/release-funds/release-funds.command';
import { SettleOrder } from '../../ledger/commands/settle-order/settle-order.command';
import { ClaimedJob, claimJobs, retryJobLater } from '../../../projections/fulfilment-jobs.queries';

/** The ledger commands this worker sends. */
type FulfilmentOutcome = RecordUpstreamAttempt | SettleOrder | ReleaseFunds | MarkResultUnknown;

export interface FulfilmentOptions {
  /** The upstream slots: top-ups this worker has at the upstream at once, at most. */
  concurrency: number;
  maxAttempts: number;
  retryBaseMs: number;
  /** Longer than a wait for an upstream slot and the slowest exchange after it (leaseFor): a lease outliving its worker is taken over. */
  leaseMs: number;
  pollMs: number;
  instanceId: string;
  /** Told each top-up request's outcome (the metrics count them by instance). */
  onUpstreamOutcome?: (outcome: UpstreamOutcome['kind']) => void;
  /** Told when an order takes one of the `concurrency` upstream slots (from recording its send until the upstream's answer) and when it gives it back. */
  slots?: SlotListener;
}

/**
 * The jobs claimed at once: the upstream slots and a quarter more. The jobs
 * beyond the slots read their orders and record their outcomes while the
 * others are at the upstream, so a slot given back is taken again at once,
 * not after a claim and a read (docs/fulfilment.md, with the figures).
 */
export function jobsClaimedAtOnce(upstreamSlots: number): number {
  return upstreamSlots + Math.ceil(upstreamSlots / 4);
}

/**
 * A job waits for a slot at most as long as one exchange: no more jobs wait
 * than there are slots, and every holder took its slot before it. Then it
 * makes its own exchange. Its lease covers both, and recording the outcome.
 */
export function leaseFor(exchangeMs: number): number {
  return 2 * exchangeMs + 5_000;
}

/**
 * Sends accepted orders to the upstream and turns each outcome into a
 * ledger command. At most `concurrency` top-ups are at the upstream at once
 * (the upstream slots): a slot is held from recording the send to the
 * answer, and reading the order and recording the outcome happen outside
 * it. Instances compete for jobs with SKIP LOCKED and leases;
 * a worker that dies mid-way leaves its lease to expire, and the next one
 * sends the same order again under the same idempotency key. A job is
 * closed by the fulfilment-jobs projection, in the transaction that applies
 * the event ending the order's upstream part (this worker's outcome, or
 * whatever moved the order on before it); until then the lease keeps other
 * workers off it.
 */
export class FulfilmentWorker extends DispatchedWorker<ClaimedJob> {
  protected readonly dispatcher: JobDispatcher<ClaimedJob>;
  private readonly upstreamSlots: Slots;
  /** Jobs starting together look their routes up in one statement. */
  private readonly routes = new StatementBatcher<string, string | null>((skuIds) => this.skuRoutes.of(skuIds), { maxBatch: 500, maxInFlight: 2 });

  constructor(
    private readonly pool: Pool,
    private readonly store: EventStore,
    private readonly commands: CommandBus,
    private readonly upstream: UpstreamProvider,
    private readonly skuRoutes: SkuRoutes,
    private readonly options: FulfilmentOptions,
    private readonly log: (message: string, error?: unknown) => void = () => undefined,
  ) {
    super();
    this.upstreamSlots = new Slots(options.concurrency, options.slots);
    this.dispatcher = new JobDispatcher({
      name: 'fulfilment jobs',
      concurrency: jobsClaimedAtOnce(options.concurrency),
      pollMs: options.pollMs,
      claim: (limit) => claimJobs(this.pool, limit, this.options.leaseMs, this.options.instanceId),
      run: (job) => this.fulfil(job),
      describe: (job) => `fulfilling ${job.order_no}`,
      log,
    });
  }

  private async fulfil(job: ClaimedJob): Promise<void> {
    const loaded = await loadAggregate(this.store, orderStream(job.order_no), orderDecider);
    const { state } = loaded;
    if (state.stage !== 'accepted' && state.stage !== 'sent') return;
    const { order } = state;
    if (job.attempts >= this.options.maxAttempts) {
      await this.run(new ReleaseFunds(job.order_no, 'UPSTREAM_UNAVAILABLE', 'The upstream could not be reached; the top-up was never sent'));
      return;
    }
    const route = await this.routeOf(order.skuId);
    if (route === null) {
      await this.run(new ReleaseFunds(job.order_no, 'SKU_UNAVAILABLE', 'No upstream route can fulfil this SKU'));
      return;
    }
    const exchange = await this.upstreamSlots.hold(async () => {
      // Recorded before sending: if the order moved on meanwhile, nothing is sent.
      const sent = await this.run(new RecordUpstreamAttempt(job.order_no, loaded));
      if (!sent) return undefined;
      const outcome = await this.upstream.topUp({
        orderNo: job.order_no,
        skuId: order.skuId,
        route,
        accountId: order.accountId,
        accountFields: order.accountFields,
        amount: formatAmount(order.amount),
        currency: order.currency,
      });
      return { sent, outcome };
    });
    if (!exchange) return;
    const { sent, outcome } = exchange;
    this.options.onUpstreamOutcome?.(outcome.kind);
    switch (outcome.kind) {
      case 'delivered':
        await this.run(new SettleOrder(job.order_no, sent));
        return;
      case 'refused':
        await this.run(new ReleaseFunds(job.order_no, outcome.failCode, outcome.failReason, sent));
        return;
      case 'unknown':
        await this.run(new MarkResultUnknown(job.order_no, outcome.reason, outcome.evidence, sent));
        return;
      case 'retryable':
        return this.retryLater(job, outcome.reason);
    }
  }

  /** A command refused because the order moved on meanwhile (e.g. staff resolved it) is not an error here. */
  private async run(command: FulfilmentOutcome): Promise<Loaded<OrderState> | undefined> {
    try {
      return await this.commands.execute(command);
    } catch (error) {
      if (error instanceof CommandRefusedError) {
        this.log(`${command.constructor.name} for ${command.orderNo} refused: ${error.code}`);
        return undefined;
      }
      throw error;
    }
  }

  private routeOf(skuId: string): Promise<string | null> {
    return this.routes.run(skuId);
  }

  private async retryLater(job: ClaimedJob, reason: string): Promise<void> {
    const delay = Math.min(this.options.retryBaseMs * 2 ** job.attempts, 60_000);
    await retryJobLater(this.pool, job.order_no, delay, reason.slice(0, 500), this.options.instanceId);
    this.nudgeIn(delay);
  }
}

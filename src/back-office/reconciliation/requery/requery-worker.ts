import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../../config/config';
import { UPSTREAM, UpstreamProvider } from '../../../fulfilment';
import { APP_CONFIG } from '../../../infrastructure/infrastructure.tokens';
import { instanceId } from '../../../infrastructure/jobs/instance-id';
import { IDLE_POLL_MS, JobDispatcher } from '../../../infrastructure/jobs/job-dispatcher';
import { logFailure } from '../../../infrastructure/logging/log-failure';
import { eventDataView } from '../../orders/order.view';
import { ClaimedRequery, RequeryJobs } from './requery-jobs';
import { proposalFor } from './requery-proposal';

/** Claims after this many leases ran out on an order are not tried again: it is recorded as unknown. */
const MAX_CLAIMS = 5;

/**
 * Asks the upstream about the orders of bulk re-query jobs, in the
 * background of every instance, through the same UpstreamProvider.status()
 * as a single re-query. At most REQUERY_CONCURRENCY are in flight across all
 * instances (the upstream's limits matter; RequeryJobs.claim counts the
 * leases of every instance); each order is leased for longer than one
 * exchange can take, so two instances never ask about one order at once,
 * and an instance that stops leaves its orders to the others when their
 * leases run out. An answer informs; nothing is resolved here.
 */
@Injectable()
export class RequeryWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Requery');
  private readonly instance = instanceId();
  private readonly dispatcher: JobDispatcher<ClaimedRequery>;

  constructor(
    private readonly jobs: RequeryJobs,
    @Inject(UPSTREAM) private readonly upstream: UpstreamProvider,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    const leaseMs = config.upstreamConnectTimeoutMs + config.upstreamTimeoutMs + 5_000;
    this.dispatcher = new JobDispatcher({
      name: 'bulk re-queries',
      concurrency: config.requeryConcurrency,
      pollMs: IDLE_POLL_MS,
      claim: (limit) => this.jobs.claim(limit, config.requeryConcurrency, leaseMs, this.instance),
      run: (claimed) => this.requery(claimed),
      describe: (claimed) => `re-querying ${claimed.order_no} for ${claimed.job_id}`,
      log: (message, error) => (error ? logFailure(this.logger, message, error) : this.logger.warn(message)),
    });
  }

  onApplicationBootstrap(): void {
    this.dispatcher.start();
  }

  /** Stops claiming and waits for the exchanges in flight: what is left waits for the next instance. */
  onModuleDestroy(): Promise<void> {
    return this.dispatcher.stop();
  }

  /** A job was just started: claim now rather than at the next poll. */
  nudge(): void {
    this.dispatcher.nudge();
  }

  private async requery(claimed: ClaimedRequery): Promise<void> {
    if (claimed.attempts > MAX_CLAIMS) {
      const reason = `not answered after ${MAX_CLAIMS} claims: the instances asking stopped or failed before recording an answer`;
      await this.jobs.recordAnswer(claimed, this.instance, { upstream: 'unknown', said: { reason }, proposal: 'leave' });
      return;
    }
    const { kind, ...said } = await this.upstream.status(claimed.order_no);
    await this.jobs.recordAnswer(claimed, this.instance, { upstream: kind, said: eventDataView(said), proposal: proposalFor(kind) });
  }
}

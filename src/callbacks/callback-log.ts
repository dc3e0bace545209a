import { Pool } from 'pg';
import { isoTimestamp } from '../shared/clock';
import { deliveryLogOf, requestRedelivery } from '../../projections/callback-log.queries';

/** One attempt to deliver an order's callback. */
export interface CallbackAttemptView {
  attempt: number;
  kind: string;
  at: string;
  url: string | null;
  /** Still being sent: no result yet, under a live lease. */
  in_progress: boolean;
  status_code: number | null;
  latency_ms: number | null;
  reply_excerpt: string | null;
  acknowledged: boolean;
  error: string | null;
}

/** An order's callback delivery: where it stands and every attempt, first to last. */
export interface CallbackLogView {
  order_no: string;
  state: string;
  attempts_made: number;
  next_attempt_at: string | null;
  attempts: CallbackAttemptView[];
}

/** What staff see of an order's callbacks, and the manual redelivery. */
export class CallbackLog {
  constructor(
    private readonly pool: Pool,
    /** Told when an attempt was brought forward, so that this instance's worker claims it now. */
    private readonly onRedelivery: () => void = () => undefined,
  ) {}

  async of(orderNo: string): Promise<CallbackLogView | undefined> {
    const { delivery, attempts } = await deliveryLogOf(this.pool, orderNo);
    if (!delivery) return undefined;
    return {
      order_no: orderNo,
      state: delivery.state,
      attempts_made: delivery.attempts_made,
      next_attempt_at: delivery.state === 'pending' && delivery.due_at ? isoTimestamp(delivery.due_at) : null,
      attempts: attempts.map((a) => {
        // No result yet: still being sent (the latest attempt, under a live lease), or its sender died.
        const inProgress = a.acknowledged === null && a.attempt === delivery.attempts_made && delivery.leased;
        const lost = a.acknowledged === null && !inProgress;
        return {
          attempt: a.attempt,
          kind: a.kind,
          at: isoTimestamp(a.started_at),
          url: a.url,
          in_progress: inProgress,
          status_code: a.status_code,
          latency_ms: a.latency_ms,
          reply_excerpt: a.reply_excerpt,
          acknowledged: a.acknowledged ?? false,
          error: lost ? 'no result recorded: the sender stopped mid-attempt' : a.error,
        };
      }),
    };
  }

  /**
   * One more attempt, now. A delivery still on its schedule is only brought
   * forward; a finished one (acknowledged or exhausted) gets one extra attempt.
   */
  async redeliver(orderNo: string): Promise<boolean> {
    const requested = await requestRedelivery(this.pool, orderNo);
    if (requested) this.onRedelivery();
    return requested;
  }
}

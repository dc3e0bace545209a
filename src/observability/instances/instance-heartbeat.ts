import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Pool } from 'pg';
import { AppConfig } from '../../config/config';
import { APP_CONFIG, PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { instanceId } from '../../infrastructure/jobs/instance-id';
import { METRICS, Metrics } from '../../infrastructure/metrics/metrics';
import { logFailure } from '../../infrastructure/logging/log-failure';

/** A row not written for this long is an instance that ended without saying so (kill -9, a lost machine): any instance deletes it. */
const FORGOTTEN_AFTER_S = 3600;

/**
 * Beyond this, the instance's clock and another's may stamp a merchant's
 * request a second or more apart, and its rate window no longer counts them
 * together (operations.md, "Their clocks").
 */
export const CLOCK_OFFSET_WARN_MS = 1000;

/**
 * Keeps this instance's row in service_instances: written at start and every
 * INSTANCE_HEARTBEAT_MS with its upstream slots, how many it holds and how
 * many it held on average since the last write, and how far its clock is
 * from the database's; deleted when it stops. The status page lists the rows
 * written lately, so an operator sees every instance's slots and clock from
 * any one of them: a growing backlog with nearly every slot held is the
 * upstream's allowance at work, with slots to spare it is this side's pace.
 */
@Injectable()
export class InstanceHeartbeat implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly instance = instanceId();
  private readonly logger = new Logger('Instances');
  private timer?: NodeJS.Timeout;
  private writing: Promise<void> = Promise.resolve();
  private previous?: { at: number; slotSeconds: number };
  private clockWarned = false;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(METRICS) private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'fulfilmentConcurrency' | 'callbackConcurrency' | 'instanceHeartbeatMs'>,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void (this.writing = this.beat()), this.config.instanceHeartbeatMs);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.writing;
    await this.pool
      .query('delete from service_instances where instance_id = $1', [this.instance])
      .catch((error) => logFailure(this.logger, 'could not remove this instance from service_instances', error));
  }

  /** Writes this instance's row; a failure (the database away) is logged and the next beat tries again. */
  private async beat(): Promise<void> {
    try {
      const at = Date.now();
      const slotSeconds = this.metrics.fulfilmentSlotTime.seconds();
      const held = this.previous && at > this.previous.at ? (slotSeconds - this.previous.slotSeconds) / ((at - this.previous.at) / 1000) : 0;
      this.previous = { at, slotSeconds };
      // A connection of its own before the clock is read: the offset then includes the statement's way to the database, not a wait for the pool.
      const client = await this.pool.connect();
      let written: { clock_offset_ms: number };
      try {
        const { rows } = await client.query<{ clock_offset_ms: number }>(
          `with forgotten as (delete from service_instances where seen_at < now() - make_interval(secs => $6))
           insert into service_instances as i (instance_id, started_at, seen_at, fulfilment_slots, fulfilment_in_flight, fulfilment_held, callback_slots, clock_offset_ms)
           values ($1, now(), now(), $2, $3, $4, $5, $7::float8 - extract(epoch from clock_timestamp()) * 1000)
           on conflict (instance_id) do update set seen_at = now(), fulfilment_slots = $2, fulfilment_in_flight = $3, fulfilment_held = $4, callback_slots = $5,
             clock_offset_ms = excluded.clock_offset_ms
           returning clock_offset_ms`,
          [
            this.instance,
            this.config.fulfilmentConcurrency,
            this.metrics.fulfilmentSlotTime.held,
            held,
            this.config.callbackConcurrency,
            FORGOTTEN_AFTER_S,
            Date.now(),
          ],
        );
        written = rows[0];
      } catch (error) {
        // A connection that failed is closed, not given back to the pool.
        client.release(error as Error);
        throw error;
      }
      client.release();
      this.clockMeasured(written.clock_offset_ms);
    } catch (error) {
      logFailure(this.logger, 'could not write this instance to service_instances', error);
    }
  }

  /** Sets the metric, and logs the clock's crossing of CLOCK_OFFSET_WARN_MS either way (clockNotice). */
  private clockMeasured(offsetMs: number): void {
    this.metrics.clockOffset.set(offsetMs / 1000);
    const notice = clockNotice(offsetMs, this.clockWarned);
    if (!notice) return;
    this.clockWarned = notice.level === 'warn';
    if (notice.level === 'warn') this.logger.warn(notice.message);
    else this.logger.log(notice.message);
  }
}

/**
 * What the log says when a clock measured `offsetMs` from the database's
 * crosses CLOCK_OFFSET_WARN_MS: a warning as it goes beyond (`warned` false
 * before), a line as it comes back (`warned` true before); nothing while it
 * stays on one side, so the log does not repeat it at every heartbeat.
 */
export function clockNotice(offsetMs: number, warned: boolean): { level: 'warn' | 'log'; message: string } | undefined {
  const beyond = Math.abs(offsetMs) > CLOCK_OFFSET_WARN_MS;
  if (beyond === warned) return undefined;
  const offset = `${Math.abs(offsetMs / 1000).toFixed(1)} s ${offsetMs > 0 ? 'ahead of' : 'behind'} the database's`;
  if (!beyond) return { level: 'log', message: `this instance's clock is back within ${CLOCK_OFFSET_WARN_MS / 1000} s of the database's (${offset})` };
  return {
    level: 'warn',
    message:
      `this instance's clock is ${offset}: merchants' rate windows count its requests apart from other instances', ` +
      "and merchants' X-Timestamp is checked against it. Keep every instance's clock within a second of the others (NTP)",
  };
}

import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { Pool } from 'pg';
import { Projection } from '../../../projections/projection';
import { rebuildProjection } from '../../../projections/rebuild';
import { EVENT_STORE, EventStore, formatPosition } from '../../ledger/ports/event-store.port';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { instanceId } from '../../infrastructure/jobs/instance-id';
import { logFailure } from '../../infrastructure/logging/log-failure';
import { isoTimestamp } from '../../shared/clock';
import { HEARTBEAT_MS, RebuildRun, RebuildRuns } from './rebuild-runs';

/**
 * Runs an online rebuild of the read models (projections/rebuild.ts) in the
 * background of this instance: the service keeps answering from the live
 * tables until the rebuilt ones have caught up, then swaps them in under the
 * live checkpoint's lock.
 *
 * Its status is a row in Postgres (RebuildRuns), so every instance reports it
 * and one rebuild at a time holds across instances. A restart aborts the
 * rebuild, which drops its half-built tables. The CLI's rebuild is not
 * counted: running it beside one is safe (each swaps in complete tables
 * under the same lock), only wasted work.
 */
@Injectable()
export class RebuildRunner implements OnModuleDestroy {
  private readonly logger = new Logger('Rebuild');
  private readonly instance = instanceId();
  private running?: { stopping: boolean; done: Promise<void> };

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly runs: RebuildRuns,
  ) {}

  /** Starts rebuilding `projections`, one after the other; the id of the rebuild still running instead, if there is one. */
  async start(projections: readonly Projection[], requestedBy: string): Promise<{ started: RebuildRun } | { running: string }> {
    const view: RebuildRun = {
      rebuild_id: `rb_${randomBytes(8).toString('hex')}`,
      status: 'running',
      requested_by: requestedBy,
      started_at: isoTimestamp(),
      finished_at: null,
      projections: projections.map((p) => ({ name: p.name, events: 0, position: null })),
    };
    const claimed = await this.runs.start(view, this.instance);
    if (!claimed.started) return { running: claimed.running };
    const run = { stopping: false, done: Promise.resolve() };
    this.running = run;
    run.done = this.run(view, projections, run);
    return { started: view };
  }

  /** Shutdown aborts a running rebuild at its next batch; rebuildProjection then drops its half-built tables. */
  async onModuleDestroy(): Promise<void> {
    if (!this.running) return;
    this.running.stopping = true;
    await this.running.done;
  }

  private async run(view: RebuildRun, projections: readonly Projection[], run: { stopping: boolean }): Promise<void> {
    const heartbeat = setInterval(() => {
      this.runs.progress(view).catch((error) => logFailure(this.logger, `rebuild ${view.rebuild_id}: recording progress failed`, error));
    }, HEARTBEAT_MS);
    try {
      for (const [i, projection] of projections.entries()) {
        const entry = view.projections[i];
        const report = await rebuildProjection(this.pool, this.store, projection, (events) => {
          if (run.stopping) throw new Error('the service is shutting down');
          entry.events = events;
        });
        entry.events = report.events;
        entry.position = formatPosition(report.position);
        this.logger.log(`rebuilt ${projection.name}: ${report.events} events up to ${entry.position}`);
      }
      view.status = 'done';
    } catch (error) {
      view.status = 'failed';
      view.error = error instanceof Error ? error.message : String(error);
      logFailure(this.logger, `rebuild ${view.rebuild_id} failed`, error);
    } finally {
      clearInterval(heartbeat);
      // Unrecorded, the row keeps "running" until its heartbeat is stale, then reads as abandoned.
      await this.runs.finish(view).catch((error) => logFailure(this.logger, `rebuild ${view.rebuild_id}: recording its end failed`, error));
      this.running = undefined;
    }
  }
}

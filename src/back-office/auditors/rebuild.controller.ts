import { randomBytes } from 'node:crypto';
import { Body, Get, HttpCode, Inject, Logger, OnModuleDestroy, Param, Post } from '@nestjs/common';
import { IsIn } from 'class-validator';
import { Pool } from 'pg';
import { allProjections } from '../../../projections/all-projections';
import { Projection } from '../../../projections/projection';
import { rebuildProjection } from '../../../projections/rebuild';
import { EVENT_STORE, EventStore, formatPosition } from '../../ledger/ports/event-store.port';
import { ApiError, successEnvelope } from '../../infrastructure/http/api-error';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { instanceId } from '../../infrastructure/jobs/instance-id';
import { logFailure } from '../../infrastructure/logging/log-failure';
import { isoTimestamp } from '../../shared/clock';
import { CurrentStaff } from '../auth/current-staff.decorator';
import { Roles } from '../auth/roles.decorator';
import type { StaffMember } from '../auth/staff-member';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { PathIds, PathIdsPipe } from '../http/identifier';
import { validateBody } from '../../infrastructure/http/validate-body';
import { BACK_OFFICE_BODY } from '../http/validate-body';
import { Optional } from '../../infrastructure/http/field-rules';
import { HEARTBEAT_MS, RebuildRuns, RebuildView } from './rebuild-runs';

const NAMES = allProjections.map((p) => p.name);

export class RebuildDto {
  /** One projection; without it, all of them, one after the other. */
  @Optional()
  @IsIn(NAMES, { message: `projection must be one of ${NAMES.join(', ')}` })
  projection?: string;
}

/**
 * Online rebuilds of the read models (projections/rebuild.ts): the service
 * keeps answering from the live tables until the rebuilt ones have caught
 * up, then swaps them in under the live checkpoint's lock.
 *
 * The rebuild runs in the background of the instance that was asked; its
 * status is a row in Postgres (RebuildRuns), so every instance reports it
 * and one rebuild at a time holds across instances. A restart aborts the
 * rebuild, which drops its half-built tables. The CLI's rebuild is not
 * counted: running it beside one is safe (each swaps in complete tables
 * under the same lock), only wasted work.
 */
@BackOfficeController('projections')
@Roles('admin')
export class RebuildController implements OnModuleDestroy {
  private readonly logger = new Logger('Rebuild');
  private readonly instance = instanceId();
  private running?: { stopping: boolean; done: Promise<void> };

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly runs: RebuildRuns,
  ) {}

  @Post('rebuild')
  @HttpCode(202)
  async start(@Body() body: unknown, @CurrentStaff() by: StaffMember) {
    const { projection } = await validateBody(RebuildDto, body === undefined ? {} : body, BACK_OFFICE_BODY);
    const chosen = allProjections.filter((p) => projection === undefined || p.name === projection);
    const view: RebuildView = {
      rebuild_id: `rb_${randomBytes(8).toString('hex')}`,
      status: 'running',
      requested_by: by.staffId,
      started_at: isoTimestamp(),
      finished_at: null,
      projections: chosen.map((p) => ({ name: p.name, events: 0, position: null })),
    };
    const claimed = await this.runs.start(view, this.instance);
    if (!claimed.started) throw new ApiError(409, 'REBUILD_RUNNING', `Rebuild ${claimed.running} is still running`);
    const run = { stopping: false, done: Promise.resolve() };
    this.running = run;
    run.done = this.run(view, chosen, run);
    return successEnvelope('ACCEPTED', { rebuild_id: view.rebuild_id, status: view.status });
  }

  @Get('rebuild/:rebuild_id')
  async status(@Param(PathIdsPipe) { rebuild_id: id }: PathIds) {
    const view = await this.runs.find(id);
    if (!view) throw new ApiError(404, 'REBUILD_NOT_FOUND', `No rebuild ${id}`);
    return successEnvelope('OK', view);
  }

  /** Shutdown aborts a running rebuild at its next batch; rebuildProjection then drops its half-built tables. */
  async onModuleDestroy(): Promise<void> {
    if (!this.running) return;
    this.running.stopping = true;
    await this.running.done;
  }

  private async run(view: RebuildView, projections: readonly Projection[], run: { stopping: boolean }): Promise<void> {
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

import { randomBytes } from 'node:crypto';
import { Body, Get, HttpCode, Inject, Logger, OnModuleDestroy, Param, Post } from '@nestjs/common';
import { IsIn } from 'class-validator';
import { Pool } from 'pg';
import { allProjections } from '../../../projections/all-projections';
import { Projection } from '../../../projections/projection';
import { rebuildProjection } from '../../../projections/rebuild';
import { EVENT_STORE, EventStore, formatPosition } from '../../infrastructure/event-store/event-store.port';
import { ApiError, successEnvelope } from '../../infrastructure/http/api-error';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { isoTimestamp } from '../../shared/clock';
import { recordAudit } from '../audit/audit-trail';
import { inTransaction } from '../audit/transaction';
import { CurrentStaff } from '../auth/current-staff.decorator';
import { Roles } from '../auth/roles.decorator';
import type { StaffMember } from '../auth/staff-member';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { PathIds, PathIdsPipe } from '../http/identifier';
import { validateBody } from '../http/validate-body';
import { Optional } from '../http/validators';
import { logFailure } from '../../infrastructure/logging/log-failure';

const NAMES = allProjections.map((p) => p.name);

export class RebuildDto {
  /** One projection; without it, all of them, one after the other. */
  @Optional()
  @IsIn(NAMES, { message: `projection must be one of ${NAMES.join(', ')}` })
  projection?: string;
}

interface RebuildView {
  rebuild_id: string;
  status: 'running' | 'done' | 'failed';
  requested_by: string;
  started_at: string;
  finished_at: string | null;
  projections: { name: string; events: number; position: string | null }[];
  error?: string;
}

/** Finished rebuilds remembered for their GET; older ones are forgotten. */
const KEPT = 20;

/**
 * Online rebuilds of the read models (projections/rebuild.ts): the service
 * keeps answering from the live tables until the rebuilt ones have caught
 * up, then swaps them in under the live checkpoint's lock.
 *
 * The rebuild runs in this instance's background and its state lives in this
 * instance's memory: a status GET must reach the instance that started it,
 * and a restart forgets it (and aborts the rebuild, which drops its tables).
 * "One at a time" is per instance too. Another instance or the CLI
 * rebuilding at the same moment is safe (each swaps in complete tables under
 * the same lock), only wasted work.
 */
@BackOfficeController('projections')
@Roles('admin')
export class RebuildController implements OnModuleDestroy {
  private readonly logger = new Logger('Rebuild');
  private readonly rebuilds = new Map<string, RebuildView>();
  private running?: { id: string; stopping: boolean; done: Promise<void> };

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  @Post('rebuild')
  @HttpCode(202)
  async start(@Body() body: unknown, @CurrentStaff() by: StaffMember) {
    const { projection } = await validateBody(RebuildDto, body === undefined ? {} : body);
    // Checked and claimed with no await in between: two requests cannot both pass.
    if (this.running) throw new ApiError(409, 'REBUILD_RUNNING', `Rebuild ${this.running.id} is still running`);
    const chosen = allProjections.filter((p) => projection === undefined || p.name === projection);
    const view: RebuildView = {
      rebuild_id: `rb_${randomBytes(8).toString('hex')}`,
      status: 'running',
      requested_by: by.staffId,
      started_at: isoTimestamp(),
      finished_at: null,
      projections: chosen.map((p) => ({ name: p.name, events: 0, position: null })),
    };
    const claim = { id: view.rebuild_id, stopping: false, done: Promise.resolve() };
    this.running = claim;
    try {
      await inTransaction(this.pool, (client) =>
        recordAudit(client, { staffId: by.staffId, action: 'projections.rebuild_started', target: `rebuild:${view.rebuild_id}`, details: { projections: chosen.map((p) => p.name) } }),
      );
    } catch (error) {
      this.running = undefined;
      throw error;
    }
    this.remember(view);
    claim.done = this.run(view, chosen, claim);
    return successEnvelope('ACCEPTED', { rebuild_id: view.rebuild_id, status: view.status });
  }

  @Get('rebuild/:rebuild_id')
  status(@Param(PathIdsPipe) { rebuild_id: id }: PathIds) {
    const view = this.rebuilds.get(id);
    if (!view) throw new ApiError(404, 'REBUILD_NOT_FOUND', `No rebuild ${id} on this instance`);
    return successEnvelope('OK', view);
  }

  /** Shutdown aborts a running rebuild at its next batch; rebuildProjection then drops its half-built tables. */
  async onModuleDestroy(): Promise<void> {
    if (!this.running) return;
    this.running.stopping = true;
    await this.running.done;
  }

  private async run(view: RebuildView, projections: readonly Projection[], claim: { stopping: boolean }): Promise<void> {
    try {
      for (const [i, projection] of projections.entries()) {
        const entry = view.projections[i];
        const report = await rebuildProjection(this.pool, this.store, projection, (events) => {
          if (claim.stopping) throw new Error('the service is shutting down');
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
      view.finished_at = isoTimestamp();
      this.running = undefined;
    }
  }

  private remember(view: RebuildView): void {
    this.rebuilds.set(view.rebuild_id, view);
    for (const [id, old] of this.rebuilds) {
      if (this.rebuilds.size <= KEPT) break;
      if (old.status !== 'running') this.rebuilds.delete(id);
    }
  }
}

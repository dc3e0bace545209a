import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { isoTimestamp } from '../../shared/clock';
import { recordAudit } from '../staff-audit-trail/audit-trail';
import { inTransaction } from '../../infrastructure/postgres/transactions';
import { staffNameSql } from '../display-names/display-names';

/** A rebuild as the instance running it keeps it. */
export interface RebuildRun {
  rebuild_id: string;
  status: 'running' | 'done' | 'failed';
  requested_by: string;
  started_at: string;
  finished_at: string | null;
  projections: { name: string; events: number; position: string | null }[];
  error?: string;
}

/** A rebuild as the back office shows it: with the name of who asked for it. */
export interface RebuildView extends RebuildRun {
  requested_by_name: string | null;
}

/** The reply to a rebuild's start: follow it at projections/rebuild/:rebuild_id. */
export interface RebuildStartedView {
  rebuild_id: string;
  status: 'running';
}

interface RebuildRow {
  rebuild_id: string;
  status: RebuildView['status'];
  requested_by: string;
  requested_by_name: string | null;
  started_at: Date;
  finished_at: Date | null;
  projections: RebuildView['projections'];
  error: string | null;
}

/** How often a running rebuild renews its heartbeat, and how old one may get before the rebuild counts as abandoned. */
export const HEARTBEAT_MS = 2_000;
const ABANDONED_AFTER = '15 seconds';
const ABANDONED = 'abandoned: the instance running it stopped (crashed or was killed) before it finished';

/**
 * Rebuilds as rows in Postgres, not in an instance's memory: any instance
 * answers for any rebuild, and "one at a time" holds across instances. A
 * rebuild whose instance died stops renewing its heartbeat; it is then
 * reported as failed, and the next rebuild may start.
 */
@Injectable()
export class RebuildRuns {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** Records a new running rebuild and its audit row; the id of the one still running if there is one. */
  async start(view: RebuildRun, runBy: string): Promise<{ started: true } | { started: false; running: string }> {
    return inTransaction(this.pool, async (client) => {
      await client.query(
        `update projection_rebuilds set status = 'failed', error = $1, finished_at = now()
         where status = 'running' and heartbeat_at < now() - $2::interval`,
        [ABANDONED, ABANDONED_AFTER],
      );
      const { rows } = await client.query<{ rebuild_id: string }>(
        `insert into projection_rebuilds (rebuild_id, status, requested_by, projections, run_by) values ($1, 'running', $2, $3, $4)
         on conflict do nothing returning rebuild_id`,
        [view.rebuild_id, view.requested_by, JSON.stringify(view.projections), runBy],
      );
      if (rows.length === 0) {
        const running = await client.query<{ rebuild_id: string }>(`select rebuild_id from projection_rebuilds where status = 'running'`);
        return { started: false, running: running.rows[0]?.rebuild_id ?? 'another rebuild' };
      }
      await recordAudit(client, {
        staffId: view.requested_by,
        action: 'projections.rebuild_started',
        target: `rebuild:${view.rebuild_id}`,
        details: { projections: view.projections.map((p) => p.name) },
      });
      return { started: true };
    });
  }

  /** Progress and heartbeat in one write. */
  async progress(view: RebuildRun): Promise<void> {
    await this.pool.query(`update projection_rebuilds set projections = $2, heartbeat_at = now() where rebuild_id = $1 and status = 'running'`, [
      view.rebuild_id,
      JSON.stringify(view.projections),
    ]);
  }

  async finish(view: RebuildRun): Promise<void> {
    await this.pool.query(
      `update projection_rebuilds set status = $2, projections = $3, error = $4, finished_at = now() where rebuild_id = $1 and status = 'running'`,
      [view.rebuild_id, view.status, JSON.stringify(view.projections), view.error ?? null],
    );
  }

  async find(rebuildId: string): Promise<RebuildView | undefined> {
    const { rows } = await this.pool.query<RebuildRow>(
      `select rebuild_id, requested_by, ${staffNameSql('projection_rebuilds.requested_by')} as requested_by_name, started_at, projections,
         case when abandoned then 'failed' else status end as status,
         case when abandoned then $3 else error end as error,
         case when abandoned then heartbeat_at else finished_at end as finished_at
       from projection_rebuilds,
         lateral (select status = 'running' and heartbeat_at < now() - $2::interval as abandoned) as a
       where rebuild_id = $1`,
      [rebuildId, ABANDONED_AFTER, ABANDONED],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      rebuild_id: row.rebuild_id,
      status: row.status,
      requested_by: row.requested_by,
      requested_by_name: row.requested_by_name,
      started_at: isoTimestamp(row.started_at),
      finished_at: row.finished_at ? isoTimestamp(row.finished_at) : null,
      projections: row.projections,
      ...(row.error === null ? {} : { error: row.error }),
    };
  }
}

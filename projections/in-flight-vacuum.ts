import { escapeIdentifier, Pool } from 'pg';
import { Projection } from './projection';

/**
 * The read models' tables that hold a row per order in flight, deleted when
 * the order moves on (Projection.inFlight): a queue's jobs, the holds on a
 * wallet, the callbacks still to make.
 */
export function inFlightTables(projections: readonly Projection[]): string[] {
  return projections.flatMap((projection) => projection.inFlight ?? []);
}

/**
 * Vacuums the in-flight tables every few seconds. Each takes and deletes a
 * row per order, so it holds a few hundred live rows among as many dead ones
 * as were deleted since its last vacuum. Autovacuum visits a database at most
 * once a minute (autovacuum_naptime): at 900 orders a second each table then
 * held 50,000 to 100,000 dead rows between its visits, its pages and index
 * pages grew with them, and every statement that reads it read them. The
 * planner, told of a few dozen rows on thousands of pages, turned lookups by
 * key into sequential scans. Vacuumed every few seconds they stay a few
 * hundred pages at most (docs/performance.md, "the in-flight tables").
 *
 * `skip_locked`: a table another vacuum or a schema change holds is left for
 * the next round, so two instances, or autovacuum, never wait on each other.
 * `parallel 0`: these indexes are small, and parallel workers are processes
 * started for each round. A round runs only when the projections applied
 * events since the last (`changed`): an idle instance vacuums nothing.
 */
export class InFlightVacuum {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  private changedSinceRound = false;
  /** Undefined with no tables named: VACUUM alone would take every table of the database. */
  private readonly statement?: string;

  constructor(
    private readonly pool: Pool,
    tables: readonly string[],
    private readonly intervalMs: number,
    private readonly onFailure: (error: unknown) => void,
  ) {
    if (tables.length > 0) this.statement = `vacuum (skip_locked, parallel 0) ${tables.map(escapeIdentifier).join(', ')}`;
  }

  start(): void {
    if (this.intervalMs === 0 || this.statement === undefined) return;
    this.schedule();
  }

  /** Stops the rounds, waiting for one in progress (a database being dropped must not have a vacuum running). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** The tables may have changed: events were applied to the read models. */
  changed(): void {
    this.changedSinceRound = true;
  }

  /** One round: every in-flight table not held by someone else. */
  async vacuum(): Promise<void> {
    if (this.statement !== undefined) await this.pool.query(this.statement);
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      if (!this.changedSinceRound) return this.schedule();
      this.changedSinceRound = false;
      this.running = this.vacuum()
        .catch(this.onFailure)
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) this.schedule();
        });
    }, this.intervalMs);
    this.timer.unref();
  }
}

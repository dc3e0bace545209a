import { Pool } from 'pg';
import { comparePositions, EventStore, GlobalPosition, RecordedEvent, START, Subscription } from '../src/ledger/ports/event-store.port';
import { Migration } from '../src/infrastructure/postgres/migrations';
import { beginAndLockCheckpoints, checkpointMove, lockCheckpoint } from './checkpoints';
import { checkpointMigrations } from './checkpoints.migrations';
import { decodeLedgerEvent, LedgerEvent } from './ledger-event';
import { liveTables, Projection, Statement, TableNames } from './projection';
import { inlineStatements } from './statement-batch';

/** The checkpoints' table, then each projection's migrations on its live tables. */
export function projectionMigrations(projections: readonly Projection[]): Migration[] {
  return [...checkpointMigrations, ...projections.flatMap((p) => p.migrations.map(({ id, sql }) => ({ id, sql: sql(liveTables(p)) })))];
}

/** A projection as one batch applies it: under which checkpoint, into which tables. */
export interface ProjectionTarget {
  projection: Projection;
  checkpoint: string;
  tables: TableNames;
}

/**
 * Applies a batch of events to every target in one transaction, in two round
 * trips: the first locks the checkpoints (in name order, as every batch
 * does, so two instances' batches never deadlock), the second sends every statement
 * and the new checkpoints and commits. Events at or before a target's
 * checkpoint are skipped for it, so a batch is applied once even when two
 * instances (or a rebuild's swap) race for it. Returns each target's position.
 */
export async function applyBatch(pool: Pool, targets: readonly ProjectionTarget[], events: readonly RecordedEvent[]): Promise<GlobalPosition[]> {
  // Decoded once for every target.
  const decoded = events.map(decodeLedgerEvent);
  const client = await pool.connect();
  try {
    const checkpoints = await beginAndLockCheckpoints(
      client,
      targets.map((t) => t.checkpoint),
    );
    const statements: Statement[] = [];
    const reached = targets.map(({ projection, checkpoint, tables }) => {
      const from = checkpoints.get(checkpoint)!;
      let to: GlobalPosition | undefined;
      const pending: LedgerEvent[] = [];
      for (const [i, recorded] of events.entries()) {
        if (comparePositions(recorded.position, from) <= 0) continue;
        const event = decoded[i];
        if (event) pending.push(event);
        to = recorded.position;
      }
      if (to === undefined) return from;
      if (projection.applyAll) statements.push(...projection.applyAll(pending, tables));
      else for (const event of pending) statements.push(...projection.apply(event, tables));
      statements.push(checkpointMove(checkpoint, to));
      return to;
    });
    await client.query(`${inlineStatements(statements)}\ncommit`);
    return reached;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Events per batch at most: a batch's transaction holds back what other readers see of the log. */
const MAX_BATCH = 500;

/**
 * After a batch short of MAX_BATCH, the runner waits this long before it
 * reads again. An event after a quiet spell is applied at once; under load
 * the events of this interval are read and applied together. Each batch
 * costs a read of the log and a transaction whatever its size, and under a
 * submit load back-to-back batches held a few submits each.
 */
export const BATCH_GAP_MS = 20;

/** What a batch applied, as the workers that wait for its events need it. */
export interface AppliedBatch {
  /** Events in the batch. */
  readonly count: number;
  /** Their types. */
  readonly types: ReadonlySet<string>;
}

/**
 * The projections as the rest of the service sees them: how far each has
 * applied the log, and a call after each batch. The batches are applied in
 * this thread (InProcessProjectionRunner) or on a thread of their own
 * (ThreadedProjectionRunner).
 */
export abstract class ProjectionRunner {
  private readonly reached = new Map<string, GlobalPosition>();
  private readonly appliedListeners: ((batch: AppliedBatch) => void)[] = [];

  constructor(readonly projections: readonly Projection[]) {}

  abstract start(): Promise<void>;
  abstract stop(): Promise<void>;

  /**
   * Called after each batch is in the read models (applied here or, by another
   * instance, before): workers wake on the events that give them work.
   */
  onApplied(listener: (batch: AppliedBatch) => void): void {
    this.appliedListeners.push(listener);
  }

  position(name: string): GlobalPosition {
    return this.reached.get(name) ?? START;
  }

  protected reach(name: string, position: GlobalPosition): void {
    this.reached.set(name, position);
  }

  protected applied(batch: AppliedBatch): void {
    for (const listener of this.appliedListeners) listener(batch);
  }
}

/** Runs each projection as a checkpointed subscription on the event store, in this thread. */
export class InProcessProjectionRunner extends ProjectionRunner {
  private readonly subscriptions: Subscription[] = [];

  constructor(
    private readonly pool: Pool,
    private readonly store: EventStore,
    projections: readonly Projection[],
    private readonly log: (message: string, error?: unknown) => void = () => undefined,
    private readonly batchGapMs = BATCH_GAP_MS,
  ) {
    super(projections);
  }

  /**
   * One subscription feeds every projection, from the oldest checkpoint: one
   * read of the log and one transaction per batch, whatever the number of
   * projections.
   */
  async start(): Promise<void> {
    const positions: GlobalPosition[] = [];
    for (const projection of this.projections) {
      const client = await this.pool.connect();
      try {
        positions.push(await lockCheckpoint(client, projection.name));
      } finally {
        client.release();
      }
      this.reach(projection.name, positions[positions.length - 1]);
    }
    if (this.projections.length === 0) return;
    const targets = this.projections.map((projection) => ({ projection, checkpoint: projection.name, tables: liveTables(projection) }));
    this.subscriptions.push(
      this.store.subscribeToAll({
        after: positions.reduce((a, b) => (comparePositions(a, b) <= 0 ? a : b)),
        maxBatchSize: MAX_BATCH,
        onEvents: async (events) => {
          const reached = await applyBatch(this.pool, targets, events);
          const last = events[events.length - 1].position;
          for (const [i, { projection }] of targets.entries()) {
            this.reach(projection.name, comparePositions(reached[i], last) > 0 ? reached[i] : last);
          }
          this.applied({ count: events.length, types: new Set(events.map((event) => event.type)) });
          if (events.length < MAX_BATCH && this.batchGapMs > 0) await new Promise((resolve) => setTimeout(resolve, this.batchGapMs));
        },
        onError: (error) => this.log('projections failed a batch; retrying', error),
      }),
    );
  }

  async stop(): Promise<void> {
    await Promise.all(this.subscriptions.splice(0).map((s) => s.stop()));
  }
}

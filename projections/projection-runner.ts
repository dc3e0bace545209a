import { Pool } from 'pg';
import {
  comparePositions,
  EventStore,
  GlobalPosition,
  RecordedEvent,
  START,
  Subscription,
} from '../src/infrastructure/event-store/event-store.port';
import { Migration } from '../src/infrastructure/postgres/migrations';
import { checkpointMigration, lockCheckpoint, saveCheckpoint } from './checkpoints';
import { liveTables, Projection, TableNames } from './projection';

export function projectionMigrations(projections: readonly Projection[]): Migration[] {
  return [
    checkpointMigration,
    ...projections.flatMap((p) =>
      p.schema.map((step, i) => ({ id: `projections/${p.name}/${String(i + 1).padStart(3, '0')}${i === 0 ? '-tables' : ''}`, sql: step(liveTables(p)) })),
    ),
  ];
}

/**
 * Applies a batch in one transaction with the checkpoint. The checkpoint row
 * is locked and events at or before it are skipped, so a batch is applied
 * once even when two instances (or a rebuild's swap) race for it.
 */
export async function applyBatch(
  pool: Pool,
  projection: Projection,
  checkpointName: string,
  tables: TableNames,
  events: readonly RecordedEvent[],
): Promise<GlobalPosition> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const checkpoint = await lockCheckpoint(client, checkpointName);
    const fresh = events.filter((e) => comparePositions(e.position, checkpoint) > 0);
    for (const event of fresh) await projection.apply(client, event, tables);
    const reached = fresh.length > 0 ? fresh[fresh.length - 1].position : checkpoint;
    if (fresh.length > 0) await saveCheckpoint(client, checkpointName, reached);
    await client.query('commit');
    return reached;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

interface Waiter {
  position: GlobalPosition;
  resolve(): void;
}

/** Runs each projection as a checkpointed subscription on the event store. */
export class ProjectionRunner {
  private readonly subscriptions: Subscription[] = [];
  private readonly reached = new Map<string, GlobalPosition>();
  private readonly waiters = new Map<string, Set<Waiter>>();

  constructor(
    private readonly pool: Pool,
    private readonly store: EventStore,
    readonly projections: readonly Projection[],
    private readonly log: (message: string, error?: unknown) => void = () => undefined,
  ) {}

  async start(): Promise<void> {
    for (const projection of this.projections) {
      const client = await this.pool.connect();
      let after: GlobalPosition;
      try {
        after = await lockCheckpoint(client, projection.name);
      } finally {
        client.release();
      }
      this.advanceTo(projection.name, after);
      this.subscriptions.push(
        this.store.subscribeToAll({
          after,
          // Small batches: a batch's transaction holds back what other readers see of the log.
          maxBatchSize: 100,
          onEvents: async (events) => {
            const reached = await applyBatch(this.pool, projection, projection.name, liveTables(projection), events);
            const last = events[events.length - 1].position;
            this.advanceTo(projection.name, comparePositions(reached, last) > 0 ? reached : last);
          },
          onError: (error) => this.log(`projection ${projection.name} failed a batch; retrying`, error),
        }),
      );
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.subscriptions.splice(0).map((s) => s.stop()));
  }

  position(name: string): GlobalPosition {
    return this.reached.get(name) ?? START;
  }

  /** Resolves once every projection has applied the event at `position` (read your own writes). */
  async waitFor(position: GlobalPosition, timeoutMs = 5000): Promise<boolean> {
    const results = await Promise.all(this.projections.map((p) => this.waitForOne(p.name, position, timeoutMs)));
    return results.every(Boolean);
  }

  private waitForOne(name: string, position: GlobalPosition, timeoutMs: number): Promise<boolean> {
    if (comparePositions(this.position(name), position) >= 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const set = this.waiters.get(name) ?? new Set<Waiter>();
      this.waiters.set(name, set);
      const waiter: Waiter = {
        position,
        resolve: () => {
          clearTimeout(timer);
          set.delete(waiter);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        set.delete(waiter);
        resolve(false);
      }, timeoutMs);
      set.add(waiter);
    });
  }

  private advanceTo(name: string, position: GlobalPosition): void {
    this.reached.set(name, position);
    for (const waiter of this.waiters.get(name) ?? []) {
      if (comparePositions(position, waiter.position) >= 0) waiter.resolve();
    }
  }
}

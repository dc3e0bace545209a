import { PoolClient } from 'pg';
import { RecordedEvent } from '../src/infrastructure/event-store/event-store.port';

/** Physical table names, keyed by the projection's logical names; a rebuild uses fresh ones. */
export type TableNames<K extends string = string> = Readonly<Record<K, string>>;

/**
 * A read model: the tables it owns and a function per event. `apply` runs
 * inside the transaction that also moves the projection's checkpoint.
 */
export interface Projection<K extends string = string> {
  readonly name: string;
  readonly tables: readonly K[];
  /**
   * DDL for the tables under the given names, as steps: each step is a
   * migration of the live tables (never edited once released), and a
   * rebuild runs them all on fresh tables. Indexes are left unnamed so
   * copies never clash.
   */
  readonly schema: readonly ((t: TableNames<K>) => string)[];
  apply(client: PoolClient, event: RecordedEvent, t: TableNames<K>): Promise<void>;
}

export const liveTables = <K extends string>(projection: Projection<K>): TableNames<K> =>
  Object.fromEntries(projection.tables.map((k) => [k, k])) as unknown as TableNames<K>;

import { LedgerEvent } from './ledger-event';

/** Physical table names, keyed by the projection's logical names; a rebuild uses fresh ones. */
export type TableNames<K extends string = string> = Readonly<Record<K, string>>;

/** One SQL statement with $1.. placeholders; values are strings, numbers, bigints, booleans or null, or arrays of them. */
export interface Statement {
  readonly text: string;
  readonly values?: readonly SqlParameter[];
}

export type SqlValue = string | number | bigint | boolean | null | undefined;

/** A placeholder's value: one value, or a column of a batch's rows (see statement-batch.ts's `unnestRows`). */
export type SqlParameter = SqlValue | readonly SqlValue[];

/**
 * A read model: the tables it owns and, per event, the statements that apply
 * it. `apply` takes the decoded, typed event (a switch over its type ends in
 * a `never` check, so a new event type is a compile error until every
 * projection says what it does with it) and only says what to write; the runner sends the statements of a
 * whole batch of events, for every projection, in one round trip and one
 * transaction that also moves each projection's checkpoint.
 */
export interface Projection<K extends string = string> {
  readonly name: string;
  readonly tables: readonly K[];
  /**
   * Of those, the tables with a row per order in flight, deleted when the
   * order moves on: vacuumed every few seconds (in-flight-vacuum.ts).
   */
  readonly inFlight?: readonly K[];
  /**
   * The DDL of the tables, in release order: each is a migration of the live
   * tables, and a rebuild runs them all on fresh tables.
   */
  readonly migrations: readonly ProjectionMigration<K>[];
  apply(event: LedgerEvent, t: TableNames<K>): readonly Statement[];
  /**
   * The statements for a batch's events (those past the checkpoint, in log
   * order), for a projection that writes less when it sees them together.
   * They must leave the tables as `apply`, event after event, would. The
   * runner uses it when it is there.
   */
  applyAll?(events: readonly LedgerEvent[], t: TableNames<K>): readonly Statement[];
}

/**
 * A migration like every other (Migration: an id stable forever, never edited
 * once released), written against the tables' names so that a rebuild can
 * run it on fresh ones. Indexes are left unnamed so copies never clash.
 */
export interface ProjectionMigration<K extends string = string> {
  /** "projections/<projection name>/NNN-what" */
  readonly id: string;
  readonly sql: (t: TableNames<K>) => string;
}

/** The projection's tables under their names plus a suffix: a rebuild's fresh copies, a test's own. */
export const suffixedTables = <K extends string>(projection: Projection<K>, suffix: string): TableNames<K> =>
  Object.fromEntries(projection.tables.map((k) => [k, `${k}${suffix}`])) as unknown as TableNames<K>;

export const liveTables = <K extends string>(projection: Projection<K>): TableNames<K> => suffixedTables(projection, '');

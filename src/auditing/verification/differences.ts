import { CheckedEvent, formatPosition } from '../../ledger/ports/event-store.port';

export type ReadModelTable = 'rm_wallets' | 'rm_wallet_holds' | 'rm_statement_lines' | 'rm_wallet_snapshots' | 'rm_orders';
export type Cell = string | number | null;
export type Row = Record<string, Cell>;

export interface EventReference {
  stream: string;
  revision: number;
  type: string;
  position: string;
}

export interface Difference {
  table: ReadModelTable;
  key: Record<string, string | number>;
  /** null when the whole row is missing (actual null) or has no event behind it (expected null). */
  column: string | null;
  expected: Cell | Row;
  actual: Cell | Row;
  /** The last event that set the expected value; null for a row no event explains. */
  explained_by: EventReference | null;
}

export const MAX_LISTED_DIFFERENCES = 1000;
const TABLE_ORDER: readonly ReadModelTable[] = ['rm_wallets', 'rm_wallet_holds', 'rm_statement_lines', 'rm_wallet_snapshots', 'rm_orders'];

export function referenceOf(event: CheckedEvent): EventReference {
  return { stream: event.streamId, revision: Number(event.revision), type: event.type, position: formatPosition(event.position) };
}

export function without(row: Row, ...columns: string[]): Row {
  return Object.fromEntries(Object.entries(row).filter(([column]) => !columns.includes(column)));
}

/** Differences, counted in full but listed only up to a bound, so a wholly wrong table cannot exhaust memory. */
export class DifferenceList {
  total = 0;
  private readonly listed: Difference[] = [];

  add(difference: Difference): void {
    this.total++;
    if (this.listed.length < MAX_LISTED_DIFFERENCES) this.listed.push(difference);
  }

  /**
   * Column by column; a missing row is one difference. `explainedBy` names
   * the event behind each column (one for all, or per column); `createdBy`
   * the event that should have created a missing row.
   */
  compareRow(
    table: ReadModelTable,
    key: Difference['key'],
    expected: Row,
    actual: Row | undefined,
    explainedBy: EventReference | Record<string, EventReference>,
    createdBy: EventReference,
  ): void {
    if (!actual) {
      this.add({ table, key, column: null, expected, actual: null, explained_by: createdBy });
      return;
    }
    for (const [column, value] of Object.entries(expected)) {
      const found = actual[column] ?? null;
      if (String(found) === String(value) && (found === null) === (value === null)) continue;
      const by = 'stream' in explainedBy ? (explainedBy as EventReference) : (explainedBy as Record<string, EventReference>)[column];
      this.add({ table, key, column, expected: value, actual: found, explained_by: by });
    }
  }

  stray(table: ReadModelTable, key: Difference['key'], actual: Row, explainedBy: EventReference | null): void {
    this.add({ table, key, column: null, expected: null, actual, explained_by: explainedBy });
  }

  /** Takes over another list's differences, after this list's own. */
  absorb(other: DifferenceList): void {
    for (const difference of other.listed) this.add(difference);
    this.total += other.total - other.listed.length;
  }

  sorted(): Difference[] {
    const rank = (d: Difference) => TABLE_ORDER.indexOf(d.table);
    return [...this.listed].sort((a, b) => rank(a) - rank(b) || JSON.stringify(a.key).localeCompare(JSON.stringify(b.key)));
  }
}

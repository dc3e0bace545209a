import { escapeLiteral } from 'pg';
import { SqlValue, Statement } from './projection';

/**
 * Statements with their values written in as literals, joined into one text
 * for Postgres's simple query protocol: a whole batch of read-model writes
 * goes in one round trip. Values are limited to what a read model stores
 * (text, integers, booleans, null) and every text is quoted by
 * escapeLiteral, so no value can end a literal.
 */
export function inlineStatements(statements: readonly Statement[]): string {
  return statements.map((statement) => `${inline(statement)};`).join('\n');
}

/** `($1, $2), ($3, $4)` for rows of values; with types, `($1::text, $2::int), ...`. */
export function placeholders(rows: readonly (readonly SqlValue[])[], types?: readonly string[]): string {
  let n = 0;
  return rows.map((row) => `(${row.map((_, i) => `$${++n}${types ? `::${types[i]}` : ''}`).join(', ')})`).join(', ');
}

function inline({ text, values = [] }: Statement): string {
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const index = Number(n) - 1;
    if (index >= values.length) throw new Error(`statement uses $${n} but has ${values.length} values: ${text.slice(0, 80)}`);
    return literal(values[index]);
  });
}

/** Only a quote or a backslash needs escaping; most texts (timestamps, identifiers) have neither. */
const NEEDS_ESCAPING = /['\\]/;

function literal(value: SqlValue): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return NEEDS_ESCAPING.test(value) ? escapeLiteral(value) : `'${value}'`;
  if (typeof value === 'bigint') return `'${value.toString()}'`;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`not a finite number: ${value}`);
    return `'${String(value)}'`;
  }
  return value ? 'true' : 'false';
}

import { escapeLiteral } from 'pg';
import { SqlParameter, SqlValue, Statement } from './projection';

/**
 * Statements with their values written in as literals, joined into one text
 * for Postgres's simple query protocol: a whole batch of read-model writes
 * goes in one round trip. Values are limited to what a read model stores
 * (text, integers, booleans, null, and arrays of them) and every text is
 * quoted by escapeLiteral, so no value can end a literal.
 */
export function inlineStatements(statements: readonly Statement[]): string {
  return statements.map((statement) => `${inline(statement)};`).join('\n');
}

/**
 * A batch's rows as a row source of fixed text: `unnest($1::text[],
 * $2::bigint[], ...)` with one array per column. A VALUES list grows with
 * the rows, and Postgres parsed and planned every batch's anew: planning
 * alone took 1 to 3 ms a batch, more than running it. An array is one
 * literal whatever its length, and unnest tells the planner how many rows it
 * holds. `first` is the first placeholder's number.
 */
export function unnestRows(rows: readonly (readonly SqlValue[])[], types: readonly string[], first = 1): { source: string; values: SqlValue[][] } {
  return {
    source: `unnest(${types.map((type, i) => `$${first + i}::${type}[]`).join(', ')})`,
    values: types.map((_, i) => rows.map((row) => row[i])),
  };
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

function literal(value: SqlParameter): string {
  if (Array.isArray(value)) return quoted(arrayText(value));
  if (value === null || value === undefined) return 'null';
  return typeof value === 'boolean' ? String(value) : quoted(scalarText(value as string | number | bigint));
}

function quoted(text: string): string {
  return NEEDS_ESCAPING.test(text) ? escapeLiteral(text) : `'${text}'`;
}

function scalarText(value: string | number | bigint | boolean): string {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new Error(`not a finite number: ${value}`);
  return String(value);
}

/** Postgres's array syntax: every element double-quoted (a quote or backslash in it escaped by a backslash), null as NULL. */
function arrayText(values: readonly SqlValue[]): string {
  const elements = values.map((value) => (value === null || value === undefined ? 'NULL' : `"${scalarText(value).replace(/["\\]/g, (c) => `\\${c}`)}"`));
  return `{${elements.join(',')}}`;
}

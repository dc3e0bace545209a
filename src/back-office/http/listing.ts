import { ApiError } from '../../infrastructure/http/api-error';
import { parseInstant } from '../../shared/clock';
import { IDENTIFIER, IDENTIFIER_RULE } from '../../shared/limits';

export { Conditions } from '../../infrastructure/postgres/conditions';

/**
 * The list routes: filters in the query string, keyset pagination with an
 * opaque `cursor` (the sort key of the last row shown), never OFFSET, so a
 * page stays cheap however deep and rows added meanwhile are neither skipped
 * nor shown twice.
 */

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

const invalid = (field: string, message: string) => new ApiError(422, 'VALIDATION_FAILED', message, field);

/**
 * The query string as plain strings. An unknown parameter is refused rather
 * than ignored: a misspelt filter (`merchantid=`) would otherwise quietly
 * list everything.
 */
export function queryParameters(query: Record<string, unknown>, allowed: readonly string[]): Record<string, string | undefined> {
  const known = ['limit', 'cursor', ...allowed];
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(query)) {
    if (!known.includes(name)) throw invalid(name, `Unknown query parameter ${name}; this route takes ${known.join(', ')}`);
    if (typeof value !== 'string') throw invalid(name, `${name} may be given once`);
    if (value.includes('\u0000')) throw invalid(name, `${name} must not contain a NUL character`);
    out[name] = value;
  }
  return out;
}

export function pageSize(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_PAGE_SIZE;
  const value = /^\d{1,4}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= 1 && value <= MAX_PAGE_SIZE)) throw invalid('limit', `limit must be an integer from 1 to ${MAX_PAGE_SIZE}`);
  return value;
}

/** The cursor is base64url JSON of the last row's sort key: opaque to callers, checked on the way back in. */
export function encodeCursor(key: readonly string[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

export function decodeCursor(raw: string | undefined, length: number): string[] | undefined {
  if (raw === undefined) return undefined;
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    key = undefined;
  }
  if (!Array.isArray(key) || key.length !== length || !key.every((k) => typeof k === 'string' && k.length <= 256)) {
    throw invalid('cursor', 'cursor must be the next_cursor of a previous page of the same list');
  }
  return key;
}

/** A page of a list as the reply holds it: the rows under their own name (`merchants`, `orders`, ...) and the cursor of the next page, null on the last. */
export type ListPage<K extends string, T> = { [key in K]: T[] } & { next_cursor: string | null };

/** Rows fetched one past the page size tell whether another page follows. */
export function page<T>(rows: T[], limit: number, keyOf: (row: T) => readonly string[]) {
  const shown = rows.slice(0, limit);
  const next = rows.length > limit ? encodeCursor(keyOf(shown[shown.length - 1])) : null;
  return { shown, next_cursor: next };
}

/**
 * A `+` pasted unencoded into a query string arrives as a space
 * (`?at=2026-11-22T10:00:00+00:00`). A space before the offset can mean
 * nothing else, so it is read as the `+` it was.
 */
export function instantParameter(raw: string | undefined, field: string): Date | undefined {
  if (raw === undefined) return undefined;
  const date = parseInstant(raw.replace(/ (\d\d:\d\d)$/, '+$1'));
  if (!date) throw invalid(field, `${field} must be an ISO 8601 time with an offset, e.g. 2026-11-22T10:00:00Z or 2026-11-22T10:00:00+00:00`);
  return date;
}

/** A whole number in decimal digits from min to max. */
export function integerParameter(raw: string | undefined, field: string, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const value = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= min && value <= max)) throw invalid(field, `${field} must be an integer from ${min} to ${max}`);
  return value;
}

export function identifierParameter(raw: string | undefined, field: string): string | undefined {
  if (raw !== undefined && !IDENTIFIER.test(raw)) throw invalid(field, `${field} must be ${IDENTIFIER_RULE}`);
  return raw;
}

export function choiceParameter<T extends string>(raw: string | undefined, field: string, choices: readonly T[]): T | undefined {
  if (raw !== undefined && !choices.includes(raw as T)) throw invalid(field, `${field} must be one of ${choices.join(', ')}`);
  return raw as T | undefined;
}

/** Free text to search for: a substring, matched without regard to case. */
export function textParameter(raw: string | undefined, field: string): string | undefined {
  if (raw === undefined) return undefined;
  if (raw.length < 1 || raw.length > 128) throw invalid(field, `${field} must be 1-128 characters`);
  return raw;
}

/** A LIKE pattern that matches `text` literally anywhere. */
export const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

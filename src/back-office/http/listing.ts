import { integer } from './query-readers';
import { invalidParameter, QueryReader, QuerySpec } from './query-string';

export { Conditions } from '../../infrastructure/postgres/conditions';

/**
 * The list routes: filters in the query string, keyset pagination with an
 * opaque `cursor` (the sort key of the last row shown), never OFFSET, so a
 * page stays cheap however deep and rows added meanwhile are neither skipped
 * nor shown twice.
 */

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

/** The cursor is base64url JSON of the last row's sort key: opaque to callers, checked on the way back in. */
export function encodeCursor(key: readonly string[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

const cursor =
  (length: number): QueryReader<string[]> =>
  (raw, name) => {
    let key: unknown;
    try {
      key = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    } catch {
      key = undefined;
    }
    if (!Array.isArray(key) || key.length !== length || !key.every((k) => typeof k === 'string' && k.length <= 256)) {
      throw invalidParameter(name, `${name} must be the next_cursor of a previous page of the same list`);
    }
    return key as string[];
  };

/** The parameters of a list: its filters, `limit` and `cursor` (the sort key of a row: `keyLength` values). */
export const listQuery = <F extends QuerySpec>(filters: F, keyLength: number) => ({ ...filters, limit: integer(1, MAX_PAGE_SIZE), cursor: cursor(keyLength) });

/** A page of a list as the reply holds it: the rows under their own name (`merchants`, `orders`, ...) and the cursor of the next page, null on the last. */
export type ListPage<K extends string, T> = { [key in K]: T[] } & { next_cursor: string | null };

/** Rows fetched one past the page size tell whether another page follows. */
export function page<T>(rows: T[], limit: number, keyOf: (row: T) => readonly string[]) {
  const shown = rows.slice(0, limit);
  const next = rows.length > limit ? encodeCursor(keyOf(shown[shown.length - 1])) : null;
  return { shown, next_cursor: next };
}

/** A LIKE pattern that matches `text` literally anywhere. */
export const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

import { parseInstant } from '../../shared/clock';
import { IDENTIFIER, IDENTIFIER_RULE } from '../../shared/limits';
import { GlobalPosition, parsePosition } from '../../ledger/ports/event-store.port';
import { invalidParameter, QueryReader } from './query-string';

/**
 * How the back office's query parameters are read, one reader per kind of
 * value. query-string.ts has already refused what no parameter may be
 * (twice, empty, not UTF-8, a control character, over 1024 characters).
 */

/** A whole number in decimal digits, nothing else (no sign, no exponent), from min to max. */
export const integer =
  (min: number, max: number): QueryReader<number> =>
  (raw, name) => {
    const value = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
    if (!(value >= min && value <= max)) throw invalidParameter(name, `${name} must be an integer from ${min} to ${max}`);
    return value;
  };

/** An offset into a list that pages by offset: from 0 to a billion. */
export const offset: QueryReader<number> = integer(0, 1_000_000_000);

/**
 * An ISO 8601 time with an offset. A `+` pasted unencoded into a query
 * string arrives as a space (`?at=2026-11-22T10:00:00+00:00`); a space
 * before the offset can mean nothing else, so it is read as the `+` it was.
 */
export const instant: QueryReader<Date> = (raw, name) => {
  const date = parseInstant(raw.replace(/ (\d\d:\d\d)$/, '+$1'));
  if (!date) throw invalidParameter(name, `${name} must be an ISO 8601 time with an offset, e.g. 2026-11-22T10:00:00Z or 2026-11-22T10:00:00+00:00`);
  return date;
};

export const choice =
  <T extends string>(choices: readonly T[]): QueryReader<T> =>
  (raw, name) => {
    if (!choices.includes(raw as T)) throw invalidParameter(name, `${name} must be one of ${choices.join(', ')}`);
    return raw as T;
  };

export const identifier: QueryReader<string> = (raw, name) => {
  if (!IDENTIFIER.test(raw)) throw invalidParameter(name, `${name} must be ${IDENTIFIER_RULE}`);
  return raw;
};

/** Free text, e.g. to search for: 1 to max characters (control characters never reach a reader). */
export const text =
  (max: number): QueryReader<string> =>
  (raw, name) => {
    if ([...raw].length > max) throw invalidParameter(name, `${name} must be 1-${max} characters`);
    return raw;
  };

/** The largest position either store can hold: PostgreSQL's bigint, EventStoreDB's signed 64-bit positions. */
const MAX_POSITION_PART = 2n ** 63n - 1n;

/** A global position as the service writes it (parsePosition), `commit/prepare`, each from 0 to 2^63 - 1. */
export const position: QueryReader<GlobalPosition> = (raw, name) => {
  const read = /^\d+\/\d+$/.test(raw) ? parsePosition(raw) : undefined;
  if (!read || read.commit > MAX_POSITION_PART || read.prepare > MAX_POSITION_PART) {
    throw invalidParameter(name, `${name} must be a global position commit/prepare like 1234/56, each an integer from 0 to ${MAX_POSITION_PART}`);
  }
  return read;
};

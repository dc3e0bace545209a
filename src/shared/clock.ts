/** ISO 8601 with an explicit numeric offset, as the contract wants: "...123+00:00". */
export function isoTimestamp(date: Date = new Date()): string {
  // toISOString always ends in "Z"; a slice is cheaper than a regular expression on this hot path.
  return `${date.toISOString().slice(0, -1)}+00:00`;
}

export interface Clock {
  now(): string;
}

export const systemClock: Clock = { now: () => isoTimestamp() };

export const ISO_INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,6})?)?(Z|[+-]\d\d:\d\d)$/;

/** An ISO 8601 time with an offset ("Z" or "+01:00"), or undefined: a time without one would be ambiguous. */
export function parseInstant(text: string): Date | undefined {
  const date = ISO_INSTANT.test(text) ? new Date(text) : undefined;
  return date && !Number.isNaN(date.getTime()) ? date : undefined;
}

/** ISO 8601 with an explicit numeric offset, as the contract wants: "...123+00:00". */
export function isoTimestamp(date: Date = new Date()): string {
  return date.toISOString().replace(/Z$/, '+00:00');
}

export interface Clock {
  now(): string;
}

export const systemClock: Clock = { now: () => isoTimestamp() };

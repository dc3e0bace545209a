/** How the console writes times, durations and amounts. */

/** An instant from the service (ISO 8601, UTC) as `2026-11-25 10:00:00 UTC`; a dash for none. */
export const time = (iso: string | null | undefined): string => (iso ? iso.replace('T', ' ').replace(/\.\d+\+00:00$/, ' UTC') : '—');

/** A wait in the largest units that say it: `42 s`, `5 min`, `3 h 12 min`, `2 d 4 h`. */
export function age(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
  return `${Math.floor(seconds / 86400)} d ${Math.floor((seconds % 86400) / 3600)} h`;
}

/** An amount (a two-decimal string from the service) with its currency. */
export const money = (amount: string, currency: string): string => `${amount} ${currency}`;

/** `1 order`, `2 orders`. */
export const count = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** datetime-local gives a time without an offset: it is the browser's local time, sent as UTC. */
export const toInstant = (local: string | undefined): string | undefined => (local ? new Date(local).toISOString() : undefined);

/** The other way, to show a chosen instant in a datetime-local field. */
export function toLocalInput(iso: string | null | undefined): string | undefined {
  if (!iso) return undefined;
  const date = new Date(iso);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

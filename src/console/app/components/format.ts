/** How the console writes times, durations and amounts. */

/** An instant (ISO 8601) as `2026-11-25 10:00:00 UTC`, in UTC to the second whatever its offset; a dash for none. */
export function time(iso: string | null | undefined): string {
  const date = iso ? new Date(iso) : undefined;
  if (!date || Number.isNaN(date.getTime())) return iso || '—';
  return date
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, ' UTC');
}

/** A wait in the largest units that say it: `42 s`, `5 min`, `3 h 12 min`, `2 d 4 h`. */
export function age(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
  return `${Math.floor(seconds / 86400)} d ${Math.floor((seconds % 86400) / 3600)} h`;
}

/** An instance's clock against the database's: `+12 ms`, `-850 ms`; past a second it says so, as the instance's log does. */
export function clockOffset(ms: number | null): string {
  if (ms === null) return 'not measured';
  const sign = ms < 0 ? '-' : '+';
  if (Math.abs(ms) <= 1000) return `${sign}${Math.abs(ms)} ms`;
  return `${sign}${Math.abs(ms / 1000).toFixed(1)} s, over a second`;
}

/** An amount (a two-decimal string from the service) with its currency. */
export const money = (amount: string, currency: string): string => `${amount} ${currency}`;

/** An amount as the service writes it ("12.50", "12.5", "12") in minor units; undefined for what is none. */
export function minorUnits(amount: string | undefined): bigint | undefined {
  const m = /^(\d{1,15})(?:\.(\d{1,2}))?$/.exec(amount?.trim() ?? '');
  return m ? BigInt(m[1]) * 100n + BigInt((m[2] ?? '').padEnd(2, '0')) : undefined;
}

/** Minor units as the service writes them: "12.50", "-0.30". */
export function fromMinor(units: bigint): string {
  const sign = units < 0n ? '-' : '';
  const abs = units < 0n ? -units : units;
  return `${sign}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
}

/** `1 order`, `2 orders`. */
export const count = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/**
 * Instants are typed and shown in UTC, as ISO 8601 to the second
 * (`2026-11-25T10:00:05Z`), like every time the console shows: the
 * browser's own time zone never enters. A time without a zone is UTC; one
 * with an offset (`+08:00`) is converted. The pattern is also the fields'
 * `pattern`, so the browser refuses what is not an instant.
 */
export const INSTANT_PATTERN = String.raw`\s*(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,3})?)?\s*(Z|z|UTC|[+\-]\d{2}:\d{2})?\s*`;
const INSTANT = new RegExp(`^${INSTANT_PATTERN}$`);

/** The instant typed, as the service takes it (`2026-11-25T10:00:05Z`); undefined when it is none (`2026-02-30T10:00:00Z` neither). */
export function parseInstant(text: string | undefined): string | undefined {
  const m = INSTANT.exec(text ?? '');
  if (!m) return undefined;
  const [year, month, day, hour, minute, second = 0] = m.slice(1, 7).map((part) => (part === undefined ? undefined : Number(part))) as number[];
  const zone = m[8] ?? 'Z';
  const offsetMinutes = /^[+-]/.test(zone) ? (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) : 0;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) return undefined;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second, Math.round(Number(m[7] ?? 0) * 1000)) - offsetMinutes * 60_000;
  return instantText(new Date(ms).toISOString());
}

/** An instant from the service (or typed) as a field shows it: `2026-11-25T10:00:05Z`, milliseconds only when there are some. */
export function instantText(iso: string | null | undefined): string | undefined {
  if (!iso) return undefined;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString().replace('.000Z', 'Z');
}

import { createHash } from 'node:crypto';

/** The `prev_hash` of a stream's first event. */
export const GENESIS_HASH = '0'.repeat(64);

/** JSON with object keys sorted at every level: the same data always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * One link of a wallet's hash chain: SHA-256 over the previous event's hash,
 * this event's revision, type and data (as stored, canonical JSON). Altering,
 * removing or reordering any event breaks every hash after it.
 */
export function chainHash(prevHash: string, revision: bigint | number, type: string, data: unknown): string {
  return createHash('sha256')
    .update(`${prevHash}\n${revision}\n${type}\n${canonicalJson(data)}`)
    .digest('hex');
}

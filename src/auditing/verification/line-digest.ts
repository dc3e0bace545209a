import { createHash } from 'node:crypto';

/**
 * A digest of a wallet's statement lines: MD5 over one text line per
 * statement line, in revision order, of its revision and compared columns
 * joined by "|" (a null as \N). Postgres computes it over the table with
 * the same formula, so equal digests mean equal lines, and only a wallet
 * whose digests differ has its lines read and compared one by one.
 */
export function lineDigestText(
  revision: bigint | number,
  entryType: string,
  orderNo: string | null,
  amount: bigint,
  balance: bigint,
  frozen: bigint,
  position: string,
): string {
  return `${revision}|${entryType}|${orderNo ?? '\\N'}|${amount}|${balance}|${frozen}|${balance - frozen}|${position}`;
}

export function lineDigest(texts: readonly string[]): string {
  return createHash('md5').update(texts.join('\n')).digest('hex');
}

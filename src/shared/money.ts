/**
 * Money is an integer count of minor units (bigint) everywhere inside; it
 * crosses the API as a string with exactly two fraction digits.
 */
export type Minor = bigint;

/** Largest amount accepted anywhere: 10^15 minor units (ten trillion). */
export const MAX_AMOUNT: Minor = 10n ** 15n;

const DECIMAL = /^(0|[1-9][0-9]{0,15})(?:\.([0-9]{1,2}))?$/;

/** Parses "12.5" or "12.50" into 1250n; undefined for anything else (signs, exponents, >2 decimals). */
export function parseAmount(text: string): Minor | undefined {
  const match = DECIMAL.exec(text);
  if (!match) return undefined;
  const value = BigInt(match[1]) * 100n + BigInt((match[2] ?? '').padEnd(2, '0'));
  return value > MAX_AMOUNT ? undefined : value;
}

/** 1250n -> "12.50"; -5n -> "-0.05". */
export function formatAmount(minor: Minor): string {
  const sign = minor < 0n ? '-' : '';
  const abs = minor < 0n ? -minor : minor;
  return `${sign}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`;
}

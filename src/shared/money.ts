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

const FORMATTED = /^(-?)(0|[1-9][0-9]*)\.([0-9]{2})$/;

/** The inverse of formatAmount ("-0.05" -> -5n), for reading back what it wrote; undefined for any other form. */
export function parseFormattedAmount(text: string): Minor | undefined {
  const match = FORMATTED.exec(text);
  if (!match) return undefined;
  const value = BigInt(match[2]) * 100n + BigInt(match[3]);
  return match[1] === '-' ? -value : value;
}

const MINOR_TEXT = /^-?(0|[1-9][0-9]*)$/;

/** A whole number of minor units as an event's stored JSON holds it ("1250", or the number 1250); undefined for anything else. */
export function parseMinorUnits(value: unknown): Minor | undefined {
  if (typeof value === 'string' && MINOR_TEXT.test(value)) return BigInt(value);
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  return undefined;
}

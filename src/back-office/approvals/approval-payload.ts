import { Minor, parseAmount } from '../../shared/money';

/**
 * Reading back what a route put in an approval's payload. The payload was
 * written by the service itself, so a field that is not as written means a
 * broken log: it fails loudly, and the approval stays to be carried out.
 */

export function payloadText(payload: Record<string, unknown>, key: string): string {
  const value = payload[key];
  if (typeof value !== 'string') throw new Error(`approval payload: ${key} is not text`);
  return value;
}

export function optionalPayloadText(payload: Record<string, unknown>, key: string): string | undefined {
  return payload[key] === undefined || payload[key] === null ? undefined : payloadText(payload, key);
}

/** An amount the route wrote as "12.50". */
export function payloadAmount(payload: Record<string, unknown>, key: string): Minor {
  const amount = parseAmount(payloadText(payload, key));
  if (amount === undefined) throw new Error(`approval payload: ${key} is not an amount`);
  return amount;
}

export function payloadChoice<T extends string>(payload: Record<string, unknown>, key: string, choices: readonly T[]): T {
  const value = payloadText(payload, key);
  if (!choices.includes(value as T)) throw new Error(`approval payload: ${key} is not one of ${choices.join(', ')}`);
  return value as T;
}

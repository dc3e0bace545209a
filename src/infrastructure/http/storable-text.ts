import { ApiError } from './api-error';

/**
 * Text Postgres cannot store: NUL is refused by every text type, and a lone
 * UTF-16 surrogate (JSON.parse makes one of "\ud800") by json and jsonb,
 * while text columns would silently turn it into U+FFFD. Neither is anything
 * a person typed, so both APIs refuse it up front instead of failing with a
 * 500 halfway through a request.
 */
export const isStorableText = (text: string): boolean => text.isWellFormed() && !text.includes('\u0000');

/**
 * The dotted path (`account_fields.server_id`, `ip_whitelist.0`) of the first
 * key or string in `value` that is not storable text, or undefined. An
 * object's keys are checked before its values. It walks with a stack, not
 * recursion, as a 64 KiB body can nest tens of thousands of levels deep.
 */
export function unstorableTextPath(value: unknown, path: string): string | undefined {
  const pending: Array<[unknown, string]> = [[value, path]];
  while (pending.length > 0) {
    const [item, at] = pending.pop()!;
    if (typeof item === 'string') {
      if (!isStorableText(item)) return at;
    } else if (typeof item === 'object' && item !== null) {
      const entries = Object.entries(item);
      const badKey = entries.find(([key]) => !isStorableText(key));
      if (badKey) return `${at}.${badKey[0]}`;
      for (let i = entries.length - 1; i >= 0; i--) pending.push([entries[i][1], `${at}.${entries[i][0]}`]);
    }
  }
  return undefined;
}

/** Throws the contract's 422 for a field holding text that cannot be stored. */
export function assertStorableText(value: unknown, field: string): void {
  const path = unstorableTextPath(value, field);
  if (path !== undefined) {
    throw new ApiError(422, 'VALIDATION_FAILED', `${path} must not contain NUL characters or unpaired UTF-16 surrogates`, path);
  }
}

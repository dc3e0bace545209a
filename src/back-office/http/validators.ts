import { isIP } from 'node:net';
import { Rule } from '../../infrastructure/http/field-rules';
import { ACCOUNT_FIELD_NAME, MAX_REQUIRED_ACCOUNT_FIELDS } from '../../shared/limits';
import { parseAmount } from '../../shared/money';

/**
 * Property decorators of the back office's own fields (the shared ones are in
 * infrastructure/http/field-rules.ts). Each rule names what is wrong
 * in its message, so one failing constraint is a complete answer to the caller.
 */

const CONTROL = /[\u0000-\u001f\u007f]/;
const MAX_DISPLAY_NAME = 128;

/** Characters as people and JSON Schema count them: code points, so an emoji is one. */
const lengthOf = (text: string) => [...text].length;

export const IsDisplayName = () =>
  Rule(
    'isDisplayName',
    {
      // Not blank: JavaScript's \s is the set String.prototype.trim removes.
      schema: { type: 'string', minLength: 1, maxLength: MAX_DISPLAY_NAME, pattern: '^(?!\\s*$)[^\\u0000-\\u001f\\u007f]*$', examples: ['Acme Games'] },
    },
    (value) => {
      if (typeof value !== 'string') return 'must be a string';
      if (value.trim() === '' || lengthOf(value) > MAX_DISPLAY_NAME) return `must be 1-${MAX_DISPLAY_NAME} characters and not blank`;
      return CONTROL.test(value) ? 'must not contain control characters' : undefined;
    },
  );

/**
 * parseAmount's form (no sign, no leading zero, at most two decimals, at most
 * MAX_AMOUNT: 13 digits, or 10000000000000 itself) and not zero.
 */
const POSITIVE_AMOUNT = '^(?!0(?:\\.00?)?$)(?:(?:0|[1-9][0-9]{0,12})(?:\\.[0-9]{1,2})?|10000000000000(?:\\.00?)?)$';

/** A positive amount as a string with at most two decimals: JSON numbers are refused, as everywhere money crosses the API. */
export const IsPositiveAmount = () =>
  Rule('isPositiveAmount', { schema: { type: 'string', pattern: POSITIVE_AMOUNT, examples: ['100.00', '0.01', '10000000000000.00'] } }, (value) => {
    if (typeof value !== 'string') return 'must be a string like "100.00", not a number';
    const minor = parseAmount(value);
    if (minor === undefined) return 'must be a decimal string with at most two decimals, at most 10000000000000.00';
    return minor > 0n ? undefined : 'must be greater than zero';
  });

export const IsHttpUrl = () =>
  Rule(
    'isHttpUrl',
    {
      schema: { type: 'string', maxLength: 2048, format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', examples: ['https://merchant.example/topup/callback'] },
      beyond:
        'An http or https URL in its normalised (WHATWG URL) form, stored as such: only the letter case of the scheme and host, and "/" for an empty path, ' +
        'may differ from it; any other difference (a character it would percent-encode, a dot segment, a default port) is refused with 422 VALIDATION_FAILED, ' +
        'and so are credentials in the URL',
    },
    (value) => callbackUrlProblem(value),
  );

/**
 * Why a callback URL is refused, if it is. It is stored, shown and called in
 * its WHATWG serialisation (`new URL(value).href`, see storedCallbackUrl), and
 * taken only when that serialisation is the URL as written, but for two
 * differences that change nothing: the letter case of the scheme and host, and
 * an empty path, which is written `/`. Anything else the serialisation would
 * change (quotes, spaces or angle brackets percent-encoded, dot segments
 * removed, a default port dropped, a backslash or tab, a host in Unicode) is
 * refused, naming the form to send instead: the URL staff see is the URL
 * that is called, and nothing in it is rewritten behind their back.
 */
export function callbackUrlProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 2048) return 'must be an http or https URL of at most 2048 characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must use http or https';
  // Credentials in a URL end up in logs; the callback is signed instead.
  if (url.username || url.password) return 'must not contain credentials';
  if (leniently(value) !== url.href) {
    return `must be written in its normalised form (WHATWG URL serialisation), which is ${url.href}; the only differences allowed are the letter case of the scheme and host, and "/" for an empty path`;
  }
  return undefined;
}

/** The form a valid callback URL (callbackUrlProblem) is stored in. */
export function storedCallbackUrl(value: string): string {
  return new URL(value).href;
}

/** The URL as written, with the scheme and host in lower case and an empty path as "/": what its serialisation must equal. */
function leniently(value: string): string | undefined {
  const parts = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/s.exec(value);
  if (!parts) return undefined;
  const [, scheme, authority, rest] = parts;
  return `${scheme.toLowerCase()}${authority.toLowerCase()}${rest.startsWith('/') ? rest : `/${rest}`}`;
}

export const MAX_WHITELIST_ENTRIES = 100;

/** An IPv4 or IPv6 address, or a CIDR range of one; zone ids never match a peer address, so they are refused. */
export function ipOrCidrProblem(entry: unknown): string | undefined {
  if (typeof entry !== 'string') return 'must be a string';
  const [address, prefix, ...rest] = entry.split('/');
  const family = address.includes('%') ? 0 : isIP(address);
  if (family === 0 || rest.length > 0) return 'is not an IP address or CIDR range';
  if (prefix === undefined) return undefined;
  const max = family === 4 ? 32 : 128;
  return /^(0|[1-9][0-9]{0,2})$/.test(prefix) && Number(prefix) <= max ? undefined : `has a prefix length outside 0-${max}`;
}

export const IsIpWhitelist = () =>
  Rule(
    'isIpWhitelist',
    {
      schema: { type: 'array', maxItems: MAX_WHITELIST_ENTRIES, items: { type: 'string' }, examples: [['127.0.0.1', '10.0.0.0/8']] },
      beyond: 'Each entry an IPv4 or IPv6 address, or a CIDR range of one (10.0.0.0/8, 2001:db8::/32), without a zone id',
    },
    (value) => {
      if (!Array.isArray(value)) return 'must be an array of IP addresses or CIDR ranges';
      if (value.length > MAX_WHITELIST_ENTRIES) return `must have at most ${MAX_WHITELIST_ENTRIES} entries`;
      for (const [index, entry] of value.entries()) {
        const problem = ipOrCidrProblem(entry);
        if (problem) return `entry ${index} (${JSON.stringify(entry)}) ${problem}`;
      }
      return undefined;
    },
  );

export const IsAccountFieldNames = () =>
  Rule(
    'isAccountFieldNames',
    {
      schema: {
        type: 'array',
        maxItems: MAX_REQUIRED_ACCOUNT_FIELDS,
        uniqueItems: true,
        items: { type: 'string', pattern: ACCOUNT_FIELD_NAME.source },
        examples: [['server_id']],
      },
    },
    (value) => {
      if (!Array.isArray(value)) return 'must be an array of field names';
      if (value.length > MAX_REQUIRED_ACCOUNT_FIELDS) return `must have at most ${MAX_REQUIRED_ACCOUNT_FIELDS} entries`;
      for (const [index, name] of value.entries()) {
        if (typeof name !== 'string' || !ACCOUNT_FIELD_NAME.test(name)) return `entry ${index} must match ${ACCOUNT_FIELD_NAME.source}`;
        if (value.indexOf(name) !== index) return `names ${name} more than once`;
      }
      return undefined;
    },
  );

const REFERENCE = /^[\x20-\x7e]{1,128}$/;

/** 1-128 printable ASCII characters: references are quoted back in statements and audit rows. */
export const IsReference = () =>
  Rule('isReference', { schema: { type: 'string', minLength: 1, maxLength: 128, pattern: REFERENCE.source, examples: ['wire-2026-11-22-001'] } }, (value) =>
    typeof value === 'string' && REFERENCE.test(value) ? undefined : 'must be 1-128 printable ASCII characters',
  );

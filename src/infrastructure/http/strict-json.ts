import { describeJsonSyntaxError, findJsonSyntaxError } from './json-syntax';

const utf8 = new TextDecoder('utf-8', { fatal: true });

export const EMPTY_BODY = 'The body is empty: send a JSON object, {} when there is nothing in it';
export const NOT_AN_OBJECT = 'The body must be a JSON object';

export type JsonResult<T = unknown> = { ok: true; value: T } | { ok: false; reason: string };

/**
 * A request body as JSON, strictly: valid UTF-8 (a leading byte-order mark is
 * dropped), valid JSON, and no key twice in one object at any depth.
 * JSON.parse would keep the last one silently, so the bytes could say two
 * things (a signed merchant request, or a deposit of "1.00" and "500.00") and
 * the service would act on one of them. Both APIs parse their bodies here.
 */
export function parseStrictJson(raw: Buffer): JsonResult {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    return { ok: false, reason: 'The body is not valid UTF-8' };
  }
  if (text.trim() === '') return { ok: false, reason: EMPTY_BODY };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const error = findJsonSyntaxError(text);
    return { ok: false, reason: `The body is not valid JSON${error ? ` ${describeJsonSyntaxError(error)}` : ''}` };
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate !== undefined) return { ok: false, reason: `The key ${JSON.stringify(duplicate)} appears twice in one object` };
  return { ok: true, value };
}

/** As parseStrictJson, and the top level must be an object. */
export function parseJsonObject(raw: Buffer): JsonResult<Record<string, unknown>> {
  const parsed = parseStrictJson(raw);
  if (parsed.ok && (typeof parsed.value !== 'object' || parsed.value === null || Array.isArray(parsed.value))) {
    return { ok: false, reason: NOT_AN_OBJECT };
  }
  return parsed as JsonResult<Record<string, unknown>>;
}

/** Scans already-valid JSON text for a key repeated within one object. */
function findDuplicateKey(text: string): string | undefined {
  const scopes: (Set<string> | null)[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const scope = scopes[scopes.length - 1];
      if (expectKey && scope) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (scope.has(key)) return key;
        scope.add(key);
      }
      expectKey = false;
      i = end;
    } else if (c === '{') {
      scopes.push(new Set());
      expectKey = true;
    } else if (c === '[') {
      scopes.push(null);
    } else if (c === '}' || c === ']') {
      scopes.pop();
    } else if (c === ',') {
      expectKey = scopes[scopes.length - 1] !== null;
    }
  }
  return undefined;
}

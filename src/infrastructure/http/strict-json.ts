import { describeJsonSyntaxError, findJsonSyntaxError } from './json-syntax';
import { invalidJson } from './request-errors';

const utf8 = new TextDecoder('utf-8', { fatal: true });

export const EMPTY_BODY = 'The body is empty: send a JSON object, {} when there is nothing in it';
export const NOT_AN_OBJECT = 'The body must be a JSON object';

/**
 * A request body as JSON, strictly: valid UTF-8 (a leading byte-order mark is
 * dropped), valid JSON, and no key twice in one object at any depth.
 * JSON.parse would keep the last one silently, so the bytes could say two
 * things (a signed merchant request, or a deposit of "1.00" and "500.00") and
 * the service would act on one of them. Every JSON body the service reads,
 * on either API and the console, is parsed here; anything else is 400
 * INVALID_JSON with the reason.
 */
export function parseStrictJson(raw: Buffer): unknown {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw invalidJson('The body is not valid UTF-8');
  }
  if (text.trim() === '') throw invalidJson(EMPTY_BODY);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const error = findJsonSyntaxError(text);
    throw invalidJson(`The body is not valid JSON${error ? ` ${describeJsonSyntaxError(error)}` : ''}`);
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate !== undefined) throw invalidJson(`The key ${JSON.stringify(duplicate)} appears twice in one object`);
  return value;
}

/** As parseStrictJson, and the top level must be an object. */
export function parseJsonObject(raw: Buffer): Record<string, unknown> {
  const value = parseStrictJson(raw);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidJson(NOT_AN_OBJECT);
  return value as Record<string, unknown>;
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

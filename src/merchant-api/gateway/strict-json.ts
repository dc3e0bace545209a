const utf8 = new TextDecoder('utf-8', { fatal: true });

export type JsonObjectResult = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string };

/**
 * The body as a JSON object, strictly: valid UTF-8, valid JSON, an object at
 * the top, and no key twice in one object (JSON.parse would keep the last one
 * silently, so the signed bytes could say two things).
 */
export function parseJsonObject(raw: Buffer): JsonObjectResult {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    return { ok: false, reason: 'The body is not valid UTF-8' };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'The body is not valid JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'The body must be a JSON object' };
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate !== undefined) return { ok: false, reason: `The key ${JSON.stringify(duplicate)} appears twice in one object` };
  return { ok: true, value: value as Record<string, unknown> };
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

import { IDENTIFIER } from '../shared/limits';

/**
 * Small builders for the OpenAPI documents: JSON Schema 2020-12 (what
 * OpenAPI 3.1 uses), so a validator checks replies against exactly what the
 * documents publish.
 */
export type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
export const string = (extra: Schema = {}): Schema => ({ type: 'string', ...extra });
export const nullable = (schema: Schema): Schema => ({ anyOf: [schema, { type: 'null' }] });
export const integer = (extra: Schema = {}): Schema => ({ type: 'integer', ...extra });
export const boolean: Schema = { type: 'boolean' };
export const array = (items: Schema, extra: Schema = {}): Schema => ({ type: 'array', items, ...extra });
export const stringMap: Schema = { type: 'object', additionalProperties: { type: 'string' } };
export const anyObject: Schema = { type: 'object' };

/** Money leaves the service as a string with exactly two decimals. */
export const money: Schema = { type: 'string', pattern: '^-?\\d+\\.\\d{2}$', examples: ['12.50'] };
/** ISO 8601 with a numeric offset, never Z. */
export const timestamp: Schema = {
  type: 'string',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}[+-]\\d{2}:\\d{2}$',
  examples: ['2026-11-22T10:04:05.123+00:00'],
};
export const position: Schema = { type: 'string', pattern: '^-?\\d+/-?\\d+$', examples: ['1532/2911'] };
export const identifier: Schema = { type: 'string', pattern: IDENTIFIER.source };

/** An object whose listed properties are all required and nothing else is allowed. */
export function closed(properties: Record<string, Schema>, optional: string[] = []): Schema {
  return {
    type: 'object',
    properties,
    required: Object.keys(properties).filter((k) => !optional.includes(k)),
    additionalProperties: false,
  };
}

/** The same, where later versions may add properties (readers must ignore unknown ones). */
export function open(properties: Record<string, Schema>, optional: string[] = []): Schema {
  return { type: 'object', properties, required: Object.keys(properties).filter((k) => !optional.includes(k)) };
}

/** The success envelope around `data`; `warnings` only when there are some. */
export function success(data: Schema, codes: string[] = ['OK']): Schema {
  return closed(
    {
      success: { const: true },
      code: codes.length === 1 ? { const: codes[0] } : { enum: codes },
      data,
      warnings: array(closed({ code: string(), message: string(), field: string() }, ['field']), { minItems: 1 }),
    },
    ['warnings'],
  );
}

/** The failure envelope, with the codes this reply may carry. */
export function failure(codes: readonly string[]): Schema {
  return closed(
    {
      success: { const: false },
      code: codes.length === 1 ? { const: codes[0] } : { enum: [...codes] },
      message: string(),
      field: string(),
    },
    ['field'],
  );
}

export interface ResponseSpec {
  description: string;
  schema?: Schema;
  /** Defaults to application/json. */
  contentType?: string;
  headers?: Record<string, unknown>;
}

const REQUEST_ID_HEADER = { $ref: '#/components/headers/X-Request-Id' };

/** An OpenAPI response object: every reply carries X-Request-Id. */
export function response({ description, schema, contentType = 'application/json', headers = {} }: ResponseSpec): Schema {
  return {
    description,
    headers: { 'X-Request-Id': REQUEST_ID_HEADER, ...headers },
    ...(schema ? { content: { [contentType]: { schema } } } : {}),
  };
}

export const requestIdHeader = {
  description:
    "The request's id: the client's own X-Request-Id when it is 1-128 visible ASCII characters, else one the service made. It is in every log line about the request.",
  schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,128}$' },
};

/** A failure reply with the codes it may carry, by HTTP status. */
export function failures(byStatus: Record<number, { codes: readonly string[]; description: string; headers?: Record<string, unknown> }>) {
  return Object.fromEntries(
    Object.entries(byStatus).map(([status, { codes, description, headers }]) => [status, response({ description, schema: failure(codes), headers })]),
  );
}

/** Every failure code a document names, for the test that compares it with the prose docs. */
export function codesIn(document: unknown): Set<string> {
  const codes = new Set<string>();
  const walk = (node: unknown, key?: string): void => {
    if (Array.isArray(node)) node.forEach((n) => walk(n));
    else if (node && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      if (key === 'code') {
        if (typeof record.const === 'string') codes.add(record.const);
        if (Array.isArray(record.enum)) for (const c of record.enum) if (typeof c === 'string') codes.add(c);
      }
      for (const [k, v] of Object.entries(record)) walk(v, k);
    }
  };
  walk(document);
  return codes;
}

import Ajv2020 from 'ajv/dist/2020';
import { getMetadataStorage } from 'class-validator';
import { ApiDocuments } from '../../src/api-docs/api-documents';
import type { NestRoute } from '../../src/api-docs/nest-routes';
import { ApiError } from '../../src/infrastructure/http/api-error';
import { validateBody } from '../../src/infrastructure/http/dto-body-validator';
import { ruleSchemaOf } from '../../src/infrastructure/http/field-rules';
import { MAX_BODY_BYTES } from '../../src/shared/limits';
import { ADMIN } from '../back-office/admin-client';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';

type Json = any;
type Outcome = 'accepted' | { status: number; code: string; field?: string };

/** A path id that every id rule takes, so that a request reaches its body check. */
const PATH_IDS: Record<string, string> = { merchant_id: 'mch_0000000000000000' };
const pathOf = (template: string) => template.replace(/\{(\w+)\}/g, (_all, name: string) => PATH_IDS[name] ?? 'x-1');

/**
 * The request bodies the documents publish are generated from the DTOs
 * (dtoJsonSchema), and this holds them to the validation itself: for every
 * route that takes a body and every field of it, values at and just past
 * each edge the document states (lengths, bounds, members, patterns), the
 * wrong types and the field's own examples, the document (ajv) and the
 * service must agree on which are accepted. Every refusal names the field,
 * checked on the real service over HTTP too.
 *
 * A rule whose schema cannot say it all (RuleSchema.beyond) is held one way:
 * what the service accepts, the document accepts. Two things every string
 * field refuses are stated once in the documents rather than per field, and
 * left out here: a NUL and a lone surrogate.
 */
describe('request bodies: the documents and the validation agree at the edges', () => {
  let db: TestDatabase;
  let service: RunningService;
  let merchant: TestMerchant;
  let documents: ApiDocuments;

  beforeAll(async () => {
    db = await createTestDatabase();
    service = await startService(db);
    merchant = await provisionMerchant(service, { rateLimit: 100_000 });
    documents = service.app.get(ApiDocuments);
  });
  afterAll(async () => {
    await service?.stop();
    await db?.drop();
  });

  const bodyRoutes = () => documents.routes.filter((route) => route.body);

  it('covers every route that validates a body', () => {
    expect(bodyRoutes().map((route) => `${route.method.toUpperCase()} ${route.path}`)).toHaveLength(22);
  });

  it('agrees on every field of every body, at its edges', async () => {
    const summary: string[] = [];
    for (const route of bodyRoutes()) {
      const document = route.path.startsWith('/api/') ? documents.merchantApi : documents.backOffice;
      const check = compile(document, route);
      const baseline = validBody(check.schema);
      expect([route.path, check.accepts(baseline)]).toEqual([route.path, true]);
      expect([route.path, await outcome(route, baseline)]).toEqual([route.path, 'accepted']);
      const looser = looserFields(route);
      for (const [field, fieldSchema] of Object.entries(check.schema.properties as Record<string, Json>)) {
        let accepted = 0;
        let refused = 0;
        for (const value of candidates(fieldSchema)) {
          const body = { ...baseline, [field]: value };
          const documented = check.accepts(body);
          const result = await outcome(route, body);
          const where = `${route.method.toUpperCase()} ${route.path} ${field}=${JSON.stringify(value)?.slice(0, 80)}`;
          if (looser.has(field)) {
            if (result === 'accepted') expect([where, documented]).toEqual([where, true]);
          } else {
            expect([where, documented ? 'accepted' : 'refused']).toEqual([where, result === 'accepted' ? 'accepted' : 'refused']);
          }
          if (result === 'accepted') {
            accepted++;
            continue;
          }
          refused++;
          expect([where, result.field === field || result.field?.startsWith(`${field}.`)]).toEqual([where, true]);
          expect([where, `${result.status} ${result.code}`]).toEqual([where, expect.stringMatching(/^(400 MISSING_REQUIRED_FIELD|422 VALIDATION_FAILED)$/)]);
          // The same body on the real service: the same refusal, field and all.
          if (JSON.stringify(body).length < MAX_BODY_BYTES) expect([where, await overHttp(route, body)]).toEqual([where, result]);
        }
        // Both sides of the field's edges were reached.
        expect([route.path, field, accepted > 0, refused > 0]).toEqual([route.path, field, true, true]);
        summary.push(`${route.method.toUpperCase()} ${route.path} ${field}: ${accepted} accepted, ${refused} refused`);
      }
    }
    expect(summary.length).toBeGreaterThanOrEqual(50);
  });

  /** What the service's validation (the route's own pipe) makes of a body. */
  async function outcome(route: NestRoute, body: unknown): Promise<Outcome> {
    try {
      await validateBody(route.body!.dto, body, route.body!.pipe.rules);
      return 'accepted';
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return { status: error.status, code: error.code, ...(error.field === undefined ? {} : { field: error.field }) };
    }
  }

  /** The same body sent to the running service: signed on the merchant API, with the admin token in the back office. */
  async function overHttp(route: NestRoute, body: unknown): Promise<Outcome> {
    const text = JSON.stringify(body);
    const reply = route.path.startsWith('/api/')
      ? await signedFetch(service, merchant, { path: route.path, body: text })
      : await fetch(`${service.url}${pathOf(route.path)}`, {
          method: route.method.toUpperCase(),
          headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
          body: text,
        }).then(async (response) => ({ status: response.status, body: await response.json() }));
    if (reply.body.success) return 'accepted';
    return { status: reply.status, code: reply.body.code, ...(reply.body.field === undefined ? {} : { field: reply.body.field }) };
  }
});

/** The route's body schema, from its document, and ajv's verdict on a body. */
function compile(document: Json, route: NestRoute) {
  const ref = document.paths[route.path][route.method].requestBody.content['application/json'].schema.$ref as string;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const id = 'https://topup.test/document';
  ajv.addSchema({ ...document, $id: id });
  const validate = ajv.getSchema(`${id}${ref}`)!;
  const schema = ref
    .split('/')
    .slice(1)
    .reduce((node, part) => node[part], document);
  return { schema, accepts: (body: unknown) => validate(body) === true };
}

/** Fields with a rule whose schema is looser than its check. */
function looserFields(route: NestRoute): Set<string> {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(route.body!.dto, '', true, false);
  return new Set(metadata.filter((m) => ruleSchemaOf(m.context)?.beyond).map((m) => m.propertyName));
}

/** A body the schema accepts: each required field (and the first of "one of these") at its first example. */
function validBody(schema: Json): Record<string, unknown> {
  const required = [...(schema.required ?? []), ...(schema.anyOf?.[0]?.required ?? [])] as string[];
  return Object.fromEntries(required.map((field) => [field, exampleOf(schema.properties[field])]));
}

function exampleOf(schema: Json): unknown {
  const own = schema.anyOf ? schema.anyOf.find((s: Json) => s.type !== 'null') : schema;
  if (own.examples) return own.examples[0];
  if (own.enum) return own.enum[0];
  if (own.type === 'boolean') return true;
  if (own.type === 'integer' || own.type === 'number') return own.minimum ?? 1;
  if (own.type === 'string') return 'a'.repeat(own.minLength ?? 1);
  throw new Error(`no example for ${JSON.stringify(own)}`);
}

/** Values at and around the edges a field's schema states, its examples, and the wrong types. */
function candidates(schema: Json): unknown[] {
  const own = schema.anyOf ? schema.anyOf.find((s: Json) => s.type !== 'null') : schema;
  const values: unknown[] = [null, true, 0, 1.5, 'x', '', [], {}, ...(own.examples ?? [])];
  if (own.enum) values.push(...own.enum, ...own.enum.map((m: string) => `${m}x`), ...own.enum.map((m: string) => m.toUpperCase()));
  if (own.type === 'boolean') values.push(false, 'true', 1);
  if (own.type === 'integer' || own.type === 'number') {
    for (const edge of [own.minimum, own.maximum].filter((n) => n !== undefined)) values.push(edge - 1, edge, edge + 1, edge + 0.5, String(edge));
  }
  if (own.type === 'string') values.push(...stringEdges(own));
  if (own.type === 'array') values.push(...arrayEdges(own));
  if (own.type === 'object') values.push(...objectEdges(own));
  return values;
}

/** Each example's last character one up and one down, and without it: "0.01" is next to "0.00" and "0.02". */
const neighbours = (example: string) =>
  [-1, 1].map((step) => example.slice(0, -1) + String.fromCharCode(example.charCodeAt(example.length - 1) + step)).concat(example.slice(0, -1));

/** Lengths at and past each bound (counted in code points, with an emoji too), the examples' neighbours, and an example grown or spoilt. */
function stringEdges(schema: Json): string[] {
  const example = String(schema.examples?.[0] ?? 'a');
  const filler = example.at(-1)!;
  const grown = (length: number) => (length <= example.length ? example.slice(0, Math.max(length, 0)) : example + filler.repeat(length - example.length));
  const lengths = [schema.minLength, schema.maxLength].filter((n) => n !== undefined).flatMap((n: number) => [n - 1, n, n + 1]);
  // Quantifier bounds the pattern may state on its own, such as {0,63}.
  const bounds = [...String(schema.pattern ?? '').matchAll(/\{(\d+),(\d+)\}/g)].flatMap((m) => [Number(m[2]), Number(m[2]) + 1, Number(m[2]) + 2]);
  return [
    ...[...lengths, ...bounds].filter((n) => n >= 0).map(grown),
    ...((schema.examples ?? []) as unknown[]).map(String).flatMap(neighbours),
    ...(schema.maxLength ? ['é'.repeat(schema.maxLength), '😀'.repeat(schema.maxLength), '😀'.repeat(schema.maxLength + 1)] : []),
    ` ${example}`,
    `${example} `,
    `${example}!`,
    `${example}\t`,
    '   ',
    example.toLowerCase(),
    example.toUpperCase(),
    `-${example}`,
    `${example}.5`,
    `${example}.555`,
    `0${example}`,
  ];
}

/** Empty, one, the most allowed and one more, the same member twice, and wrong members. */
function arrayEdges(schema: Json): unknown[][] {
  const example = (schema.examples?.[0] ?? [exampleOf(schema.items)]) as unknown[];
  const distinct = (n: number) => Array.from({ length: n }, (_v, i) => variant(example[0], i));
  const sizes = [schema.minItems, schema.maxItems].filter((n) => n !== undefined).flatMap((n: number) => [n - 1, n, n + 1]);
  return [[], example, [example[0], example[0]], [5], [null], [{}], ...sizes.filter((n) => n >= 0).map(distinct)];
}

/** An example member made distinct by its index: a string grows a digit, an object's first string member does. */
function variant(member: unknown, index: number): unknown {
  if (typeof member === 'string') return `${member}${index}`;
  if (member && typeof member === 'object') {
    const [key, value] = Object.entries(member).find(([, v]) => typeof v === 'string')!;
    return { ...member, [key]: `${String(value)}${index}` };
  }
  return member;
}

/** No member, the example, members at and past the count and the length their schema allows, and members of the wrong type. */
function objectEdges(schema: Json): Record<string, unknown>[] {
  const example = (schema.examples?.[0] ?? {}) as Record<string, unknown>;
  const [key = 'k'] = Object.keys(example);
  const members = (n: number) => Object.fromEntries(Array.from({ length: n }, (_v, i) => [`${key}${i}`, 'v']));
  const values = schema.additionalProperties ?? {};
  return [
    example,
    { [key]: 5 },
    { [key]: null },
    ...[values.minLength, values.maxLength].filter((n) => n !== undefined).flatMap((n: number) => [n - 1, n, n + 1].map((l) => ({ [key]: 'v'.repeat(l) }))),
    ...[schema.maxProperties].filter((n) => n !== undefined).flatMap((n: number) => [members(n), members(n + 1)]),
  ];
}

import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { dtoJsonSchema, UnknownRuleError } from '../infrastructure/http/dto-json-schema';
import { backOfficeDocument } from './back-office.openapi';
import { merchantApiDocument } from './merchant-api.openapi';
import { NestRoute, nestRoutes } from './nest-routes';
import { codesIn } from './schema-kit';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Routes no document describes, and why. */
const UNDOCUMENTED: readonly { path: RegExp; why: string }[] = [
  { path: /^\/console(\/|$)/, why: "the staff console's own page and session (docs/console.md)" },
  { path: /^\/favicon\.ico$/, why: "the browsers' icon" },
  { path: /^\/docs\/assets\//, why: "the page at /docs's own files" },
];

/**
 * The two OpenAPI documents as the service serves them: each operation as
 * written in the *.openapi.ts files (what it does, its replies and refusals),
 * its request body generated from the DTO the route validates it with, and
 * the routes and methods checked against the controllers Nest mounted. What
 * does not fit (a route with no operation, an operation with no route, a
 * rule with no JSON Schema) is a problem: logged at start-up, and a test
 * holds the list empty. The documents are still served, without that part.
 */
@Injectable()
export class ApiDocuments implements OnModuleInit {
  private readonly logger = new Logger('ApiDocuments');
  merchantApi: Json = {};
  backOffice: Json = {};
  problems: string[] = [];
  /** The routes the controllers serve, as the documents were checked against them. */
  routes: readonly NestRoute[] = [];

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit() {
    const controllers = this.discovery.getControllers().map((wrapper) => wrapper.metatype as new () => object);
    this.routes = nestRoutes(controllers);
    Object.assign(this, buildDocuments(this.routes));
    for (const problem of this.problems) this.logger.error(`API documents: ${problem}`);
  }
}

/** Both documents for these routes. */
export function buildDocuments(routes: readonly NestRoute[]) {
  const documented = routes.filter((route) => !UNDOCUMENTED.some(({ path }) => path.test(route.path)));
  const merchant = withRoutes(merchantApiDocument(), documented.filter(isMerchantApi));
  const backOffice = withRoutes(
    backOfficeDocument(),
    documented.filter((route) => !isMerchantApi(route)),
  );
  return { merchantApi: merchant.document, backOffice: backOffice.document, problems: [...merchant.problems, ...backOffice.problems] };
}

const isMerchantApi = (route: NestRoute) => route.path.startsWith('/api/');

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
const named = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

/** The document with each route's request body in place, and what does not fit. */
export function withRoutes(document: Json, routes: readonly NestRoute[]): { document: Json; problems: string[] } {
  const problems: string[] = [];
  const mounted = new Set<string>();
  for (const route of routes) {
    const operation = document.paths[route.path]?.[route.method] as Json | undefined;
    if (!operation) {
      problems.push(`${named(route.method, route.path)} (${route.handler}) is served but not in the document "${document.info.title}"`);
      continue;
    }
    mounted.add(named(route.method, route.path));
    if (route.body) problems.push(...attachBody(document, operation, route));
  }
  for (const [path, item] of Object.entries(document.paths as Record<string, Json>)) {
    for (const method of METHODS.filter((m) => item[m])) {
      if (!mounted.has(named(method, path))) problems.push(`${named(method, path)} is in the document "${document.info.title}" but no controller serves it`);
    }
  }
  return { document, problems };
}

/** The DTO's schema as the operation's request body, under components/schemas; the refusals a body check gives must be among its replies. */
function attachBody(document: Json, operation: Json, route: NestRoute): string[] {
  const { dto, pipe } = route.body!;
  const where = `${named(route.method, route.path)} (${route.handler})`;
  if (operation.requestBody) return [`${where}: its request body is written by hand, but comes from ${dto.name}`];
  let schema: Json;
  try {
    schema = dtoJsonSchema(dto, pipe.rules);
  } catch (error) {
    if (error instanceof UnknownRuleError) return [`${where}: ${error.message}`];
    throw error;
  }
  const name = `${dto.name.replace(/Dto$/, '')}Body`;
  const schemas = (document.components.schemas ??= {}) as Json;
  if (schemas[name] && JSON.stringify(schemas[name]) !== JSON.stringify(schema)) return [`${where}: two bodies are named ${name}`];
  schemas[name] = schema;
  operation.requestBody = {
    required: pipe.emptyBody === 'refused',
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } },
  };
  const refusals: [number, string][] = [
    [400, 'INVALID_JSON'],
    [422, 'VALIDATION_FAILED'],
  ];
  if (schema.required || schema.anyOf) refusals.push([400, 'MISSING_REQUIRED_FIELD']);
  return refusals
    .filter(([status, code]) => !codesIn(operation.responses[status] ?? {}).has(code))
    .map(([status, code]) => `${where}: its body can be refused with ${status} ${code}, which its replies do not list`);
}

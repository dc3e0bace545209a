import { BACK_OFFICE_ROUTES, documentedPath } from '../../back-office/routes.public';
import { anyObject, array, boolean, closed, integer, nullable, open, position, response, string, success, timestamp } from '../schema-kit';
import { ok, operation, PathItems, refusals } from './route-kit';

/** Whether the service keeps up, for staff. */
export function statusPaths(): PathItems {
  return {
    [documentedPath(BACK_OFFICE_ROUTES.status)]: {
      get: operation({
        summary: 'Whether the service keeps up: projections, fulfilment, callbacks, reconciliation',
        roles: ['admin'],
        responses: {
          200: ok(
            'The status',
            open({
              at: timestamp,
              projections: array(
                open({
                  name: string(),
                  position,
                  events_behind: integer(),
                  events_behind_at_least: boolean,
                  rebuildable: { type: 'boolean', description: 'Whether POST /admin/v1/projections/rebuild takes it, alone or among all of them' },
                }),
              ),
              fulfilment: open({ pending: integer(), retrying: integer(), oldest_due_at: nullable(timestamp) }),
              callbacks: open({ pending: integer(), exhausted: integer(), oldest_due_at: nullable(timestamp) }),
              reconciliation: open({ unknown_result_orders: integer(), oldest: nullable(anyObject) }),
            }),
          ),
          ...refusals({}),
        },
      }),
    },
  };
}

const checkResult = closed({ ok: boolean, ms: integer(), error: string(), detail: anyObject }, ['error', 'detail']);
const readinessChecks = closed({ postgres: checkResult, event_store: checkResult, migrations: checkResult, projections: checkResult, wallets: checkResult });

/** The operators' probes, the metrics and these documents: no staff token. */
export function probePaths(): PathItems {
  return {
    '/health': {
      get: probe("The summary: always 200 while the process serves, with this instance's projection positions", {
        200: response({
          description: 'Serving',
          schema: closed({
            status: { const: 'ok' },
            event_store: { enum: ['postgres', 'esdb'] },
            projections: { type: 'object', additionalProperties: position },
          }),
        }),
      }),
    },
    '/health/live': {
      get: probe('Liveness: the process runs. Never depends on the database, so an outage never gets the process restarted', {
        200: response({ description: 'Alive', schema: success(closed({ status: { const: 'live' }, uptime_s: integer({ minimum: 0 }) })) }),
      }),
    },
    '/health/ready': {
      get: probe(
        'Readiness: Postgres and the event store answer, every migration is applied, every projection is within READY_MAX_LAG_MS of the log, ' +
          'and the wallets loaded at start-up (WALLET_WARMUP) are loaded',
        {
          200: response({ description: 'Ready', schema: success(closed({ status: { const: 'ready' }, checks: readinessChecks })) }),
          503: response({
            description: 'Not ready: `message` names each failed check, `checks` has them all',
            schema: closed({ success: { const: false }, code: { const: 'NOT_READY' }, message: string(), checks: readinessChecks }),
            headers: { 'Retry-After': { schema: { type: 'string' } } },
          }),
        },
      ),
    },
    '/metrics': {
      get: {
        ...probe('Prometheus metrics (text exposition format 0.0.4)', {
          200: response({ description: 'The metrics', contentType: 'text/plain; version=0.0.4; charset=utf-8', schema: { type: 'string' } }),
          401: response({
            description: 'METRICS_TOKEN is set and the bearer token is missing or wrong',
            schema: closed({ success: { const: false }, code: { const: 'UNAUTHORIZED' }, message: string() }),
          }),
          404: response({
            description: 'Served on METRICS_PORT instead, or not at all (production without METRICS_TOKEN or METRICS_PORT)',
            schema: closed({ success: { const: false }, code: { const: 'NOT_FOUND' }, message: string() }),
          }),
        }),
        security: [{}, { MetricsToken: [] }],
      },
    },
    '/docs': {
      get: probe('These documents as a page to read (no scripts, nothing fetched from elsewhere)', {
        200: response({ description: 'The page', contentType: 'text/html', schema: { type: 'string' } }),
      }),
    },
    '/docs/merchant-api.json': {
      get: probe('The merchant API v2 as OpenAPI 3.1', { 200: response({ description: 'The document', schema: { type: 'object', required: ['openapi'] } }) }),
    },
    '/docs/back-office.json': {
      get: probe('This document', { 200: response({ description: 'The document', schema: { type: 'object', required: ['openapi'] } }) }),
    },
  };
}

function probe(summary: string, responses: Record<string, unknown>) {
  return { summary, tags: ['Operations'], security: [], responses };
}

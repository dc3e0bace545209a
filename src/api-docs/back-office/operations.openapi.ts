import { BACK_OFFICE_ROUTES, documentedPath } from '../../back-office/routes.public';
import { anyObject, array, boolean, closed, integer, money, nullable, open, position, ref, response, Schema, string, success, timestamp } from '../schema-kit';
import { ok, operation, PathItems, query, refusals } from './route-kit';

/** Whether the service keeps up, for staff. */
export function statusPaths(): PathItems {
  return {
    [documentedPath(BACK_OFFICE_ROUTES.status)]: {
      get: operation({
        summary: 'Whether the service keeps up: its instances and their upstream slots, projections, fulfilment, callbacks, reconciliation',
        roles: ['admin'],
        responses: {
          200: ok(
            'The status',
            open({
              at: timestamp,
              instances: array(
                open({
                  instance: { type: 'string', description: 'host/pid/tag of the process' },
                  started_at: timestamp,
                  seen_at: {
                    ...timestamp,
                    description: 'When the instance last wrote its row (every INSTANCE_HEARTBEAT_MS); listed while within three of them',
                  },
                  clock_offset_ms: {
                    ...nullable(integer()),
                    description:
                      "Its clock minus the database's as it last wrote its row (negative: behind); null from a version that does not measure it. Keep every instance within 1,000 ms of the others: merchants' rate windows count their requests together only then",
                  },
                  fulfilment: open({
                    slots: { ...integer({ minimum: 0 }), description: 'Its FULFILMENT_CONCURRENCY: top-ups it has at the upstream at once at most' },
                    in_flight: { ...integer({ minimum: 0 }), description: 'Slots held when it last wrote its row' },
                    held: { type: 'number', minimum: 0, description: 'Slots held on average between its last two writes' },
                  }),
                  callbacks: open({ slots: { ...integer({ minimum: 0 }), description: 'Its CALLBACK_CONCURRENCY' } }),
                }),
              ),
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

const count = integer({ minimum: 0 });
const counts = (...names: string[]) => Object.fromEntries(names.map((name) => [name, count]));
const seconds = nullable(integer({ minimum: 0 }));
const milliseconds = nullable({ type: 'number', minimum: 0 });

/** One point of the dashboard's series: what happened in the slot that starts at `at`. */
const dashboardPoint = closed({
  at: timestamp,
  orders: closed(counts('accepted', 'success', 'failed', 'unknown', 'refused', 'resolved')),
  upstream: closed({
    ...counts('sent', 'delivered', 'refused', 'unknown', 'retried'),
    latency_ms: closed({ p50: milliseconds, p99: milliseconds }),
  }),
  callbacks: closed({
    ...counts('acknowledged', 'not_acknowledged'),
    acknowledged_ratio: nullable({ type: 'number', minimum: 0, maximum: 1 }),
  }),
});

/** The operations dashboard's reply; later versions may add series or figures. */
export const dashboard: Schema = open({
  at: timestamp,
  window: { enum: ['1h', '24h'] },
  step_seconds: { enum: [60, 900] },
  from: timestamp,
  to: timestamp,
  series: array(dashboardPoint, { minItems: 60, maxItems: 96 }),
  now: open({
    projections: array(closed({ name: string(), events_behind: count, events_behind_at_least: boolean, lag_seconds: { type: 'number', minimum: 0 } })),
    fulfilment: closed({ pending: count, oldest_age_seconds: seconds }),
    callbacks: closed({ pending: count, exhausted: count, oldest_pending_age_seconds: seconds }),
    reconciliation: closed({ unknown_result_orders: count, oldest_age_seconds: seconds, oldest_order_no: nullable(string()) }),
    low_balance: closed({
      total: count,
      merchants: array(closed({ merchant_id: string(), name: string(), currency: string(), available_balance: money, low_balance_threshold: money }), {
        maxItems: 100,
      }),
    }),
  }),
});

/** How the service has been doing over the last hour or day, for operators. */
export function dashboardPaths(): PathItems {
  return {
    [documentedPath(BACK_OFFICE_ROUTES.operationsDashboard)]: {
      get: operation({
        summary: 'The operations dashboard: orders, the upstream and callbacks over time, and the queues now',
        description:
          'Series a point a minute over the last hour (window=1h, the default: 60 points) or a point every 15 minutes over the last 24 hours ' +
          '(window=24h: 96 points), in UTC slots aligned on the epoch, the last one the slot now is in; and the queues, the projections and ' +
          'the merchants under their low-balance threshold as they are now. Read from per-minute rollups and indexes, never the orders or the log whole.',
        roles: ['admin'],
        parameters: [query('window', '1h (default) or 24h; anything else, an empty value or the parameter twice is refused', { enum: ['1h', '24h'] })],
        responses: { 200: ok('The dashboard', ref('Dashboard')), ...refusals({}) },
      }),
    },
  };
}

const checkResult = closed({ ok: boolean, ms: integer(), error: string(), detail: anyObject }, ['error', 'detail']);
const readinessChecks = closed({
  postgres: checkResult,
  event_store: checkResult,
  migrations: checkResult,
  projections: checkResult,
  wallets: checkResult,
  intake: checkResult,
});

/** The operators' probes, the metrics and these documents: no staff token. */
export function probePaths(): PathItems {
  return {
    '/health': {
      get: probe(
        "The summary: always 200 while the process serves, with this instance's projection positions (null for a projection that has processed no event yet)",
        {
          200: response({
            description: 'Serving',
            schema: success(
              closed({
                status: { const: 'ok' },
                event_store: { enum: ['postgres', 'esdb'] },
                projections: { type: 'object', additionalProperties: nullable(position) },
              }),
            ),
          }),
        },
      ),
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
      get: probe(
        'Both documents as an interactive reference: Swagger UI, its files served by this service under /docs/assets (nothing fetched from elsewhere), try-it with a bearer token or, on the merchant API, signed in the page',
        {
          200: response({ description: 'The page', contentType: 'text/html', schema: { type: 'string' } }),
        },
      ),
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

import { BACK_OFFICE_ROUTES, documentedPath } from '../../back-office/routes.public';
import { MAX_REPORT_BYTES } from '../../fulfilment';
import { MAX_BULK_BODY_BYTES } from '../../shared/limits';
import { array, boolean, closed, failures, integer, money, nullable, open, ref, response, Schema, string, timestamp } from '../schema-kit';
import { approvalRequired, listOf, listParameters, merchantName, ok, operation, PathItems, pathId, query, refusals, staffName } from './route-kit';

const CATEGORIES = ['matched', 'resolvable', 'exceptions', 'missing', 'in_flight'];
const REASONS = [
  'agree',
  'result_unknown',
  'deducted_they_failed',
  'released_they_delivered',
  'amount_differs',
  'currency_differs',
  'never_sent',
  'not_ours',
  'absent_from_report',
  'in_fulfilment',
];
const ANSWERS = ['delivered', 'refused', 'pending', 'not_received', 'unknown'];
const PROPOSALS = ['success', 'failed', 'leave', 'decide'];
const APPLY_RESULTS = ['applied', 'already_applied', 'skipped', 'refused'];
const OUTCOME: Schema = { enum: ['success', 'failed'] };

const counts = (keys: string[]) => closed(Object.fromEntries(keys.map((k) => [k, integer({ minimum: 0 })])));
const pageOf = (filter: string, choices: string[]) => closed({ [filter]: nullable({ enum: choices }), total: integer(), limit: integer(), offset: integer() });

/** What the last bulk apply did with an order of a report or a job. */
const applied: Schema = nullable(
  closed({
    result: { enum: APPLY_RESULTS },
    outcome: nullable(OUTCOME),
    code: nullable(string()),
    message: nullable(string()),
    resolved_by: nullable(string({ description: 'Who resolved the order instead, when it was skipped' })),
    resolved_by_name: staffName('resolved_by'),
    applied_by: string(),
    applied_by_name: staffName('applied_by'),
    approved_by: nullable(string({ description: 'The second person who approved the apply under the four-eyes rule' })),
    approved_by_name: staffName('approved_by'),
    applied_at: timestamp,
  }),
);

const jobSummaryProperties = {
  job_id: string({ pattern: '^rq_[0-9a-f]{16}$' }),
  status: { enum: ['running', 'done'] },
  requested_by: string(),
  requested_by_name: staffName('requested_by'),
  created_at: timestamp,
  finished_at: nullable(timestamp),
  filter: closed({
    merchant_id: nullable(string()),
    merchant_name: nullable(string()),
    created_from: nullable(timestamp),
    created_to: nullable(timestamp),
    order_nos: nullable(integer({ description: 'How many order numbers the filter listed' })),
  }),
  total: integer(),
  done: integer(),
};

export const requeryJobSummary: Schema = closed(jobSummaryProperties);

export const requeryJob: Schema = closed({
  ...jobSummaryProperties,
  not_in_queue: array(string(), { description: 'The order_nos given that the filter did not select: not in the queue, or left out by the other filters' }),
  upstream: counts(ANSWERS),
  proposals: counts(PROPOSALS),
  applied: counts(APPLY_RESULTS),
  page: pageOf('proposal', PROPOSALS),
  results: array(
    closed({
      item: integer({ minimum: 1 }),
      order_no: string(),
      merchant_id: string(),
      merchant_name: merchantName,
      amount: money,
      currency: string(),
      upstream: nullable(open({ status: { enum: ANSWERS } })),
      proposal: nullable({ enum: PROPOSALS }),
      answered_at: nullable(timestamp),
      applied,
    }),
  ),
});

const lineError: Schema = closed({
  line: integer({ minimum: 1 }),
  column: nullable(string({ description: 'The column at fault; null when the whole line is' })),
  message: string(),
});

const reportSummaryProperties = {
  report_id: string({ pattern: '^rp_[0-9a-f]{16}$' }),
  source: { enum: ['upload', 'upstream'] },
  file_name: nullable(string()),
  size_bytes: integer(),
  sha256: string({ pattern: '^[0-9a-f]{64}$' }),
  received_by: string(),
  received_by_name: staffName('received_by'),
  received_at: timestamp,
  window: nullable(closed({ from: timestamp, to: timestamp })),
  lines: integer(),
  valid: boolean,
  error_count: integer(),
  counts: counts(CATEGORIES),
};

export const upstreamReportSummary: Schema = closed(reportSummaryProperties);

export const upstreamReport: Schema = closed({
  ...reportSummaryProperties,
  errors: array(lineError, { maxItems: 100 }),
  proposals: closed({ success: integer(), failed: integer() }),
  applied: counts(APPLY_RESULTS),
  page: pageOf('category', CATEGORIES),
  items: array(
    closed({
      item: integer({ minimum: 1 }),
      category: { enum: CATEGORIES },
      reason: { enum: REASONS },
      line: nullable(integer({ minimum: 2 })),
      order_no: string(),
      merchant_id: nullable(string()),
      merchant_name: nullable(string()),
      ours: nullable(
        closed({
          stage: string(),
          status: nullable({ enum: ['processing', 'success', 'failed'] }),
          amount: money,
          currency: string(),
          resolved_by: nullable(string()),
          resolved_by_name: staffName('resolved_by'),
        }),
      ),
      theirs: nullable(
        closed({ status: { enum: ['delivered', 'failed'] }, amount: money, currency: string(), reference: nullable(string()), completed_at: timestamp }),
      ),
      proposal: nullable(OUTCOME),
      applied,
    }),
  ),
});

export const bulkApply: Schema = closed({
  source: { enum: ['report', 'requery'] },
  report_id: nullable(string()),
  job_id: nullable(string()),
  note: string(),
  applied_by: string(),
  applied_by_name: staffName('applied_by'),
  approved_by: nullable(string()),
  approved_by_name: staffName('approved_by'),
  counts: counts(APPLY_RESULTS),
  amounts: array(closed({ currency: string(), deducted: money, released: money })),
  orders: array(
    closed({
      order_no: string(),
      merchant_id: nullable(string()),
      merchant_name: nullable(string()),
      amount: nullable(money),
      currency: nullable(string()),
      outcome: nullable(OUTCOME),
      result: { enum: APPLY_RESULTS },
      code: nullable(string()),
      message: nullable(string()),
      resolved_by: nullable(string()),
      resolved_by_name: staffName('resolved_by'),
    }),
  ),
});

const jobId = pathId('job_id', 'The re-query job, `rq_` and 16 hex characters');
const reportId = pathId('report_id', 'The report, `rp_` and 16 hex characters');
const instant = string({ description: 'ISO 8601 with an offset', examples: ['2026-11-22T10:00:00Z'] });

/** The refusals of a route whose JSON body may list 10,000 orders: 1 MiB rather than 64 KiB. */
function bulkBodyRefusals(own: Parameters<typeof refusals>[0]) {
  return {
    ...refusals(own, { body: true }),
    ...failures({ 413: { codes: ['PAYLOAD_TOO_LARGE'], description: `The body is over ${MAX_BULK_BODY_BYTES / 1024 / 1024} MiB` } }),
  };
}

/** A report with errors: kept (report_id), never applied. */
const reportRejected = response({
  description: 'A bad query parameter; or a report with errors, kept and listed with its first 100 errors, that can never be applied',
  schema: {
    anyOf: [
      closed({ success: { const: false }, code: { const: 'VALIDATION_FAILED' }, message: string(), field: string() }, ['field']),
      closed({
        success: { const: false },
        code: { const: 'REPORT_INVALID' },
        message: string(),
        report_id: string(),
        error_count: integer(),
        errors: array(lineError),
      }),
    ],
  },
});

/** Bulk re-query, upstream reports and bulk apply (docs/back-office-api.md, "Bulk reconciliation"). */
export function bulkReconciliationPaths(): PathItems {
  return {
    [documentedPath(BACK_OFFICE_ROUTES.requeryJobs)]: {
      post: operation({
        summary: 'Re-query many unknown-result orders at once, in the background',
        description:
          'Selects the orders of the reconciliation queue that the filter matches (at least one filter; they combine with "and") and asks the upstream about each, ' +
          'REQUERY_CONCURRENCY at a time across all instances. Proposals are never applied by themselves.',
        roles: ['reconciler'],
        responses: {
          202: ok('The job, started', ref('RequeryJob'), ['ACCEPTED']),
          ...bulkBodyRefusals({ 422: { codes: ['REQUERY_TOO_LARGE'], description: 'No filter; or one that selects more than 50,000 orders' } }),
        },
      }),
      get: operation({
        summary: 'Bulk re-query jobs, newest first',
        roles: ['reconciler', 'auditor'],
        parameters: listParameters([]),
        responses: { 200: ok('A page of jobs', listOf('jobs', ref('RequeryJobSummary'))), ...refusals({}) },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.requeryJob)]: {
      get: operation({
        summary: 'A job: progress, counts per answer and proposal, and a page of its orders',
        roles: ['reconciler', 'auditor'],
        parameters: [
          jobId,
          query('proposal', 'Only the orders with this proposal', { enum: PROPOSALS }),
          query('limit', 'Orders per page, 1-1000 (default 100)', string({ pattern: '^\\d+$' })),
          query('offset', 'Skip this many', string({ pattern: '^\\d+$' })),
        ],
        responses: { 200: ok('The job', ref('RequeryJob')), ...refusals({ 404: { codes: ['REQUERY_JOB_NOT_FOUND'], description: 'no such job' } }) },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.requeryJobApply)]: {
      post: operation({
        summary: "Apply a job's proposals in one call",
        description:
          'Without `orders`, every definitive proposal (success, failed); with it, those orders (one the upstream never received needs an `outcome`). ' +
          "Each becomes a ResolveOrder with the note and the upstream's answer as evidence, against the order's current state. Over APPROVAL_THRESHOLD (the sum it would move, per currency) the whole apply waits for another person (202).",
        roles: ['reconciler'],
        parameters: [jobId],
        responses: {
          200: ok('What was done with each order', ref('BulkApply')),
          202: approvalRequired,
          ...bulkBodyRefusals({ 404: { codes: ['REQUERY_JOB_NOT_FOUND'], description: 'no such job' } }),
        },
      }),
    },
    // Before reports/{report_id}, which would match "fetch" too.
    [documentedPath(BACK_OFFICE_ROUTES.reportsFetch)]: {
      post: operation({
        summary: "Fetch the upstream's transaction report for a window",
        description: 'GET {UPSTREAM_URL}/v1/reports/transactions (docs/upstream-protocol.md), stored and matched like an upload.',
        roles: ['reconciler'],
        responses: {
          201: ok('The report, new', ref('UpstreamReport')),
          200: ok('The upstream sent the same bytes for this window before: that report', ref('UpstreamReport'), ['DUPLICATE']),
          ...refusals({ 502: { codes: ['UPSTREAM_REPORT_FAILED'], description: 'The upstream gave no whole report: the message says why' } }, { body: true }),
          422: reportRejected,
        },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.reports)]: {
      post: {
        ...operation({
          summary: 'Upload an upstream transaction report',
          description:
            `The CSV as the raw body (Content-Type text/csv) or as the one file of multipart/form-data, at most ${MAX_REPORT_BYTES / 1024 / 1024} MiB. ` +
            "Kept as received with its SHA-256; the same bytes (for the same window) give the same report back. The window is `from` and `to`, else the lines' first and last completion.",
          roles: ['reconciler'],
          parameters: [
            query('from', 'The window the report covers, with `to`', instant),
            query('to', 'The end of the window (excluded)', instant),
            query('file_name', 'A name for a raw upload (a multipart file has its own)', string({ maxLength: 255 })),
          ],
          responses: {
            201: ok('The report, new: its counts per category and a first page of items', ref('UpstreamReport')),
            200: ok('The same bytes were received before: that report', ref('UpstreamReport'), ['DUPLICATE']),
            ...refusals({
              400: { codes: ['INVALID_MULTIPART'], description: 'A multipart body that is not one file' },
              413: { codes: ['PAYLOAD_TOO_LARGE'], description: `The body is over ${MAX_REPORT_BYTES / 1024 / 1024} MiB` },
              415: { codes: ['UNSUPPORTED_MEDIA_TYPE'], description: 'Neither CSV nor multipart/form-data' },
            }),
            422: reportRejected,
          },
        }),
        requestBody: {
          required: true,
          content: {
            'text/csv': { schema: string({ description: 'order_no,status,amount,currency,reference,completed_at and a line per top-up' }) },
            'multipart/form-data': {
              schema: { type: 'object', description: 'One file part (any field name)', additionalProperties: string({ contentMediaType: 'text/csv' }) },
            },
          },
        },
      },
      get: operation({
        summary: 'Upstream reports, newest first',
        roles: ['reconciler', 'auditor'],
        parameters: listParameters([]),
        responses: { 200: ok('A page of reports', listOf('reports', ref('UpstreamReportSummary'))), ...refusals({}) },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.report)]: {
      get: operation({
        summary: 'A report: its errors, counts per category and a page of its items',
        roles: ['reconciler', 'auditor'],
        parameters: [
          reportId,
          query('category', 'Only the items of this category', { enum: CATEGORIES }),
          query('limit', 'Items per page, 1-1000 (default 100)', string({ pattern: '^\\d+$' })),
          query('offset', 'Skip this many', string({ pattern: '^\\d+$' })),
        ],
        responses: { 200: ok('The report', ref('UpstreamReport')), ...refusals({ 404: { codes: ['REPORT_NOT_FOUND'], description: 'no such report' } }) },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.reportExport)]: {
      get: operation({
        summary: "A report's items as CSV for the finance team",
        description: "Every cell neutralised against formula injection (a leading ' before =, +, -, @, tab or carriage return). Streamed, as an attachment.",
        roles: ['reconciler', 'auditor'],
        parameters: [reportId, query('category', 'Only the items of this category', { enum: CATEGORIES })],
        responses: {
          200: response({
            description: 'The items, a header line first',
            schema: string(),
            contentType: 'text/csv',
            headers: { 'Content-Disposition': { schema: string() } },
          }),
          ...refusals({ 404: { codes: ['REPORT_NOT_FOUND'], description: 'no such report' } }),
        },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.reportOriginal)]: {
      get: operation({
        summary: 'A report exactly as received',
        description:
          "The bytes the upload or the upstream sent, unchanged, as an opaque download, for comparing with the provider's file; X-Content-SHA256 is their SHA-256, as in the report. Cells are not neutralised: open the export in a spreadsheet, not this.",
        roles: ['reconciler', 'auditor'],
        parameters: [reportId],
        responses: {
          200: response({
            description: 'The bytes as received',
            schema: string(),
            contentType: 'application/octet-stream',
            headers: { 'Content-Disposition': { schema: string() }, 'X-Content-SHA256': { schema: string({ pattern: '^[0-9a-f]{64}$' }) } },
          }),
          ...refusals({ 404: { codes: ['REPORT_NOT_FOUND'], description: 'no such report' } }),
        },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.reportApply)]: {
      post: operation({
        summary: "Apply a report's resolvable orders in one call",
        description:
          'Without `orders`, every resolvable order as the report says; with it, those orders. Each becomes a ResolveOrder with the note and the report line as evidence. Over APPROVAL_THRESHOLD (the sum it would move, per currency) the whole apply waits for another person (202).',
        roles: ['reconciler'],
        parameters: [reportId],
        responses: {
          200: ok('What was done with each order', ref('BulkApply')),
          202: approvalRequired,
          ...bulkBodyRefusals({
            404: { codes: ['REPORT_NOT_FOUND'], description: 'no such report' },
            409: { codes: ['REPORT_INVALID'], description: 'The report has errors: it can never be applied' },
          }),
        },
      }),
    },
  };
}

import { Migration } from '../../../infrastructure/postgres/migrations';

/** Upstream transaction reports as received, and their lines matched against the orders (upstream-reports.ts). */
export const upstreamReportMigrations: readonly Migration[] = [
  {
    id: 'reconciliation/002-upstream-reports',
    sql: `
      create table upstream_reports (
        report_id    text        primary key,
        -- The evidence as received: the bytes, their SHA-256 and size.
        content      bytea       not null,
        sha256       text        not null,
        size_bytes   int         not null,
        -- The same bytes for the same window give the same report back: sha256, and the window when one was given.
        dedupe_key   text        not null unique,
        source       text        not null check (source in ('upload', 'upstream')),
        file_name    text,
        received_by  text        not null,
        received_at  timestamptz not null default now(),
        -- [window_from, window_to): given, or from the lines' completions; null for a report without lines and window.
        window_from  timestamptz,
        window_to    timestamptz,
        lines        int         not null,
        valid        boolean     not null,
        error_count  int         not null,
        -- The first errors, [{line, column, message}]: a report with any can never be applied.
        errors       jsonb       not null,
        -- Items per category, as matched when received: {matched, resolvable, ...}.
        counts       jsonb       not null
      );
      create index upstream_reports_newest on upstream_reports (received_at desc, report_id desc);

      create table upstream_report_items (
        report_id      text        not null references upstream_reports,
        -- The report's lines in order, then the orders of ours it lacks.
        item           int         not null,
        category       text        not null check (category in ('matched', 'resolvable', 'exceptions', 'missing', 'in_flight')),
        reason         text        not null,
        line           int,
        order_no       text        not null,
        merchant_id    text,
        -- {status, amount, currency, reference, completed_at} as the line has it; null for an order the report lacks.
        theirs         jsonb,
        -- {stage, status, amount, currency, resolved_by} as the orders read model had it at matching; null for no order of ours.
        ours           jsonb,
        proposal       text        check (proposal in ('success', 'failed')),
        -- The last bulk apply that took the order (bulk-resolutions.ts).
        applied_result text        check (applied_result in ('applied', 'already_applied', 'skipped', 'refused')),
        applied_detail jsonb,
        applied_by     text,
        applied_at     timestamptz,
        primary key (report_id, item),
        unique (report_id, order_no)
      );
      create index upstream_report_items_category on upstream_report_items (report_id, category, item);
    `,
  },
];

import { Migration } from '../../../infrastructure/postgres/migrations';

/** Bulk re-query jobs and their orders (requery-jobs.ts), so that a job outlives the instance that started it. */
export const requeryJobMigrations: readonly Migration[] = [
  {
    id: 'reconciliation/001-requery-jobs',
    sql: `
      create table requery_jobs (
        job_id       text        primary key,
        requested_by text        not null,
        -- As asked: {merchant_id, created_from, created_to, order_nos}, each absent when not given.
        filter       jsonb       not null,
        -- The order_nos given that the filter did not select.
        not_in_queue jsonb       not null default '[]',
        total        int         not null,
        created_at   timestamptz not null default now(),
        -- Set when its last order is answered.
        finished_at  timestamptz
      );
      create index requery_jobs_newest on requery_jobs (created_at desc, job_id desc);

      create table requery_items (
        job_id         text        not null references requery_jobs,
        order_no       text        not null,
        -- The order's place in the job: the queue's order when the job started.
        item           int         not null,
        merchant_id    text        not null,
        amount         bigint      not null,
        currency       text        not null,
        -- The job's start: the oldest job's orders are asked first.
        queued_at      timestamptz not null,
        state          text        not null default 'waiting' check (state in ('waiting', 'answered')),
        -- A lease, renewed by nobody: longer than one exchange with the upstream, so two instances never ask at once.
        lease_until    timestamptz,
        leased_by      text,
        attempts       int         not null default 0,
        upstream       text        check (upstream in ('delivered', 'refused', 'pending', 'not_received', 'unknown')),
        -- What else the upstream said (reference, fail_code, reason ...), as the single re-query shows it.
        answer         jsonb,
        proposal       text        check (proposal in ('success', 'failed', 'leave', 'decide')),
        answered_at    timestamptz,
        -- The last bulk apply that took the order (bulk-resolutions.ts).
        applied_result text        check (applied_result in ('applied', 'already_applied', 'skipped', 'refused')),
        applied_detail jsonb,
        applied_by     text,
        applied_at     timestamptz,
        primary key (job_id, order_no),
        unique (job_id, item)
      );
      -- The claim's queue, and whether a job has anything left.
      create index requery_items_waiting on requery_items (queued_at, job_id, item) where state = 'waiting';
      create index requery_items_job_waiting on requery_items (job_id) where state = 'waiting';
      -- The re-queries in flight, counted at each claim against REQUERY_CONCURRENCY.
      create index requery_items_leased on requery_items (lease_until) where state = 'waiting';
    `,
  },
];

import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { ApiError } from '../../../infrastructure/http/api-error';
import { PG_POOL } from '../../../infrastructure/infrastructure.tokens';
import { isoTimestamp, parseInstant } from '../../../shared/clock';
import { formatAmount } from '../../../shared/money';
import { unknownResultOrders } from '../../../../projections/orders.queries';
import { DisplayNames, Names } from '../../display-names/display-names';
import { appliedStaff, appliedView } from '../bulk-apply/bulk-apply.view';
import { StartRequeryDto } from './requery.dto';
import { RequeryCounts, RequeryItemRow, RequeryJobRow, RequeryJobs, StoredRequeryFilter } from './requery-jobs';
import { RequeryProposal } from './requery-proposal';
import { RequeryJobSummaryView, RequeryJobView, RequeryResultView } from './requery.view';
import { RequeryWorker } from './requery-worker';

/** The most orders one job takes: a larger selection is refused, so that a filter typed too wide does not flood the upstream. */
export const MAX_JOB_ORDERS = 50_000;

/** Starts bulk re-query jobs over the reconciliation queue and shows them. */
@Injectable()
export class BulkRequeries {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly jobs: RequeryJobs,
    private readonly worker: RequeryWorker,
    private readonly names: DisplayNames,
  ) {}

  /** Records a job over the orders now in the queue that the filter selects; the worker asks the upstream in the background. */
  async start(body: StartRequeryDto, staffId: string): Promise<RequeryJobView> {
    const filter = storedFilter(body);
    const orders = await unknownResultOrders(
      this.pool,
      {
        merchantId: filter.merchant_id,
        createdFrom: filter.created_from === undefined ? undefined : parseInstant(filter.created_from),
        createdTo: filter.created_to === undefined ? undefined : parseInstant(filter.created_to),
        orderNos: filter.order_nos,
      },
      MAX_JOB_ORDERS + 1,
    );
    if (orders.length > MAX_JOB_ORDERS) {
      throw new ApiError(
        422,
        'REQUERY_TOO_LARGE',
        `The filter selects more than ${MAX_JOB_ORDERS} orders: narrow it (a merchant, a shorter window) and start several jobs`,
      );
    }
    const selected = new Set(orders.map((o) => o.order_no));
    const jobId = `rq_${randomBytes(8).toString('hex')}`;
    await this.jobs.create({ jobId, requestedBy: staffId, filter, notInQueue: (filter.order_nos ?? []).filter((n) => !selected.has(n)), orders });
    this.worker.nudge();
    const view = await this.view(jobId, { limit: 100, offset: 0 });
    if (!view) throw new Error(`job ${jobId} vanished after it was recorded`);
    return view;
  }

  async view(jobId: string, page: { proposal?: RequeryProposal; limit: number; offset: number }): Promise<RequeryJobView | undefined> {
    const found = await this.jobs.find(jobId, page);
    if (!found) return undefined;
    const { job, counts, items } = found;
    const names = await this.names.of({
      merchants: [...items.map((i) => i.merchant_id), ...(job.filter.merchant_id ? [job.filter.merchant_id] : [])],
      staff: [job.requested_by, ...items.flatMap(appliedStaff)],
    });
    return {
      ...summaryView(job, names),
      not_in_queue: job.not_in_queue,
      ...counts,
      page: { proposal: page.proposal ?? null, total: pageTotal(job, counts, page.proposal), limit: page.limit, offset: page.offset },
      results: items.map((i) => resultView(i, names)),
    };
  }

  async list(after: readonly string[] | undefined, limit: number): Promise<{ rows: RequeryJobRow[]; views: RequeryJobSummaryView[] }> {
    const rows = await this.jobs.list(after, limit);
    const names = await this.names.of({
      merchants: rows.flatMap((r) => (r.filter.merchant_id ? [r.filter.merchant_id] : [])),
      staff: rows.map((r) => r.requested_by),
    });
    return { rows, views: rows.map((r) => summaryView(r, names)) };
  }
}

function storedFilter(body: StartRequeryDto): StoredRequeryFilter {
  const given = [body.merchant_id, body.created_from, body.created_to, body.order_nos].filter((f) => f !== undefined);
  if (given.length === 0) {
    throw new ApiError(
      422,
      'VALIDATION_FAILED',
      'Give at least one of merchant_id, created_from, created_to and order_nos: a job never takes the whole queue unasked',
    );
  }
  const from = body.created_from === undefined ? undefined : parseInstant(body.created_from);
  const to = body.created_to === undefined ? undefined : parseInstant(body.created_to);
  if (from && to && from >= to) throw new ApiError(422, 'VALIDATION_FAILED', 'created_to must be later than created_from', 'created_to');
  return {
    ...(body.merchant_id === undefined ? {} : { merchant_id: body.merchant_id }),
    ...(from === undefined ? {} : { created_from: isoTimestamp(from) }),
    ...(to === undefined ? {} : { created_to: isoTimestamp(to) }),
    ...(body.order_nos === undefined ? {} : { order_nos: body.order_nos }),
  };
}

function pageTotal(job: RequeryJobRow, counts: RequeryCounts, proposal: RequeryProposal | undefined): number {
  return proposal === undefined ? job.total : counts.proposals[proposal];
}

function summaryView(job: RequeryJobRow, names: Names): RequeryJobSummaryView {
  return {
    job_id: job.job_id,
    status: job.done < job.total ? 'running' : 'done',
    requested_by: job.requested_by,
    requested_by_name: job.requested_by_name ?? names.staff(job.requested_by),
    created_at: isoTimestamp(job.created_at),
    finished_at: job.finished_at ? isoTimestamp(job.finished_at) : null,
    filter: {
      merchant_id: job.filter.merchant_id ?? null,
      merchant_name: job.filter.merchant_id ? names.merchant(job.filter.merchant_id) : null,
      created_from: job.filter.created_from ?? null,
      created_to: job.filter.created_to ?? null,
      order_nos: job.filter.order_nos?.length ?? null,
    },
    total: job.total,
    done: job.done,
  };
}

function resultView(item: RequeryItemRow, names: Names): RequeryResultView {
  return {
    item: item.item,
    order_no: item.order_no,
    merchant_id: item.merchant_id,
    merchant_name: names.merchant(item.merchant_id),
    amount: formatAmount(BigInt(item.amount)),
    currency: item.currency,
    upstream: item.upstream === null ? null : { status: item.upstream, ...item.answer },
    proposal: item.proposal,
    answered_at: item.answered_at ? isoTimestamp(item.answered_at) : null,
    applied: appliedView(item, names),
  };
}

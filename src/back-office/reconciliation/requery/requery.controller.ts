import { Body, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { approvalOr } from '../../approvals/approval-reply';
import { ApiError, successEnvelope } from '../../../infrastructure/http/api-error';
import { CurrentStaff } from '../../auth/current-staff.decorator';
import { Roles } from '../../auth/roles.decorator';
import type { StaffMember } from '../../auth/staff-member';
import { BodyPipe } from '../../http/back-office-body.pipe';
import { BackOfficeController } from '../../http/back-office-controller.decorator';
import { JsonBodyLimit } from '../../http/json-body.interceptor';
import { PathIds, PathIdsPipe } from '../../http/identifier';
import { DEFAULT_PAGE_SIZE, ListPage, listQuery, page } from '../../http/listing';
import { choice } from '../../http/query-readers';
import { QueryString, QueryValues } from '../../http/query-string';
import { BACK_OFFICE_ROUTES } from '../../routes.public';
import { MAX_BULK_BODY_BYTES } from '../../../shared/limits';
import { BulkApplyDto } from '../bulk-apply/bulk-apply.dto';
import { BulkApplyRequests } from '../bulk-apply/bulk-apply-requests';
import { ITEM_PAGE_QUERY, ITEM_PAGE_SIZE } from '../item-page';
import { BulkRequeries } from './bulk-requeries';
import { StartRequeryDto } from './requery.dto';
import { REQUERY_PROPOSALS } from './requery-proposal';
import { RequeryJobSummaryView } from './requery.view';

const JOBS_QUERY = listQuery({}, 2);
const JOB_QUERY = { proposal: choice(REQUERY_PROPOSALS), ...ITEM_PAGE_QUERY };

/**
 * Bulk re-query: many orders of the reconciliation queue asked about at
 * once, in the background, with a proposal per order that a clerk then
 * applies in one call. Nothing is resolved without that call.
 */
@BackOfficeController()
@Roles('reconciler')
export class RequeryController {
  constructor(
    private readonly requeries: BulkRequeries,
    private readonly applies: BulkApplyRequests,
  ) {}

  @Post(BACK_OFFICE_ROUTES.requeryJobs)
  @JsonBodyLimit(MAX_BULK_BODY_BYTES)
  @HttpCode(202)
  async start(@Body(BodyPipe) body: StartRequeryDto, @CurrentStaff() by: StaffMember) {
    return successEnvelope('ACCEPTED', await this.requeries.start(body, by.staffId));
  }

  /** Jobs, newest first. */
  @Get(BACK_OFFICE_ROUTES.requeryJobs)
  @Roles('reconciler', 'auditor')
  async list(@QueryString(JOBS_QUERY) q: QueryValues<typeof JOBS_QUERY>) {
    const limit = q.limit ?? DEFAULT_PAGE_SIZE;
    const { rows, views } = await this.requeries.list(q.cursor, limit + 1);
    const { shown, next_cursor } = page(rows, limit, (r) => [r.sort_at, r.job_id]);
    return successEnvelope('OK', { jobs: views.slice(0, shown.length), next_cursor } satisfies ListPage<'jobs', RequeryJobSummaryView>);
  }

  /** Progress, counts and a page of the orders with their answers and proposals. */
  @Get(BACK_OFFICE_ROUTES.requeryJob)
  @Roles('reconciler', 'auditor')
  async job(@Param(PathIdsPipe) { job_id: jobId }: PathIds, @QueryString(JOB_QUERY) q: QueryValues<typeof JOB_QUERY>) {
    const view = await this.requeries.view(jobId, { proposal: q.proposal, limit: q.limit ?? ITEM_PAGE_SIZE, offset: q.offset ?? 0 });
    if (!view) throw new ApiError(404, 'REQUERY_JOB_NOT_FOUND', `No re-query job ${jobId}`);
    return successEnvelope('OK', view);
  }

  /** The job's definitive proposals, or the orders chosen, each resolved as a clerk would by hand. */
  @Post(BACK_OFFICE_ROUTES.requeryJobApply)
  @JsonBodyLimit(MAX_BULK_BODY_BYTES)
  @HttpCode(200)
  async apply(
    @Param(PathIdsPipe) { job_id: jobId }: PathIds,
    @Body(BodyPipe) body: BulkApplyDto,
    @CurrentStaff() by: StaffMember,
    @Res({ passthrough: true }) response: Response,
  ) {
    const answer = await this.applies.apply({ source: 'requery', jobId, orders: body.orders }, body.note, by.staffId);
    return approvalOr(response, answer.approval, () => answer.applied);
  }
}

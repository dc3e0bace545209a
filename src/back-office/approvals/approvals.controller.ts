import { Body, Get, HttpCode, Param, Post } from '@nestjs/common';
import { successEnvelope } from '../../infrastructure/http/api-error';
import { CurrentStaff } from '../auth/current-staff.decorator';
import { Roles } from '../auth/roles.decorator';
import type { StaffMember } from '../auth/staff-member';
import { BodyPipe } from '../http/back-office-body.pipe';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { PathIds, PathIdsPipe } from '../http/identifier';
import { choice, integer, offset } from '../http/query-readers';
import { QueryString, QueryValues } from '../http/query-string';
import { BACK_OFFICE_ROUTES } from '../routes.public';
import { APPROVAL_KINDS } from './approval.decider';
import { APPROVAL_STATUSES } from './approval.view';
import { ApprovalInbox } from './approval-inbox';
import { ApprovalDecisionDto } from './approvals.dto';

const LIST_QUERY = {
  status: choice([...APPROVAL_STATUSES, 'all'] as const),
  kind: choice(APPROVAL_KINDS),
  limit: integer(1, 200),
  offset,
};

/**
 * Requests that wait for a second person (the four-eyes rule,
 * APPROVAL_THRESHOLD): reconcilers see and decide resolutions, admins
 * everything, auditors read.
 */
@BackOfficeController()
@Roles('reconciler')
export class ApprovalsController {
  constructor(private readonly inbox: ApprovalInbox) {}

  /** Newest first; with no status, those still waiting come first. */
  @Get(BACK_OFFICE_ROUTES.approvals)
  @Roles('reconciler', 'auditor')
  async list(@CurrentStaff() staff: StaffMember, @QueryString(LIST_QUERY) q: QueryValues<typeof LIST_QUERY>) {
    const page = await this.inbox.page(staff, { status: q.status ?? 'all', kind: q.kind, limit: q.limit ?? 50, offset: q.offset ?? 0 });
    return successEnvelope('OK', page);
  }

  @Get(BACK_OFFICE_ROUTES.approval)
  @Roles('reconciler', 'auditor')
  async one(@CurrentStaff() staff: StaffMember, @Param(PathIdsPipe) { approval_id: approvalId }: PathIds) {
    return successEnvelope('OK', await this.inbox.one(staff, approvalId));
  }

  /** Approves and carries out: the money moves in this request, with the approver in its event. */
  @Post(BACK_OFFICE_ROUTES.approveApproval)
  @HttpCode(200)
  async approve(@CurrentStaff() staff: StaffMember, @Param(PathIdsPipe) { approval_id: approvalId }: PathIds, @Body(BodyPipe) body: ApprovalDecisionDto) {
    return successEnvelope('OK', await this.inbox.approve(staff, approvalId, body.note));
  }

  @Post(BACK_OFFICE_ROUTES.rejectApproval)
  @HttpCode(200)
  async reject(@CurrentStaff() staff: StaffMember, @Param(PathIdsPipe) { approval_id: approvalId }: PathIds, @Body(BodyPipe) body: ApprovalDecisionDto) {
    return successEnvelope('OK', await this.inbox.reject(staff, approvalId, body.note));
  }
}

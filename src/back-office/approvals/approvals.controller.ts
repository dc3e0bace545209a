import { Body, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiError, successEnvelope } from '../../infrastructure/http/api-error';
import { CurrentStaff } from '../auth/current-staff.decorator';
import { Roles } from '../auth/roles.decorator';
import type { StaffMember } from '../auth/staff-member';
import { BodyPipe } from '../http/back-office-body.pipe';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { PathIds, PathIdsPipe } from '../http/identifier';
import { choiceParameter, integerParameter } from '../http/listing';
import { BACK_OFFICE_ROUTES } from '../routes.public';
import { APPROVAL_KINDS } from './approval.decider';
import { APPROVAL_STATUSES } from './approval.view';
import { ApprovalInbox } from './approval-inbox';
import { ApprovalDecisionDto } from './approvals.dto';

const LIST_PARAMETERS = ['status', 'kind', 'limit', 'offset'];

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
  async list(@CurrentStaff() staff: StaffMember, @Query() query: Record<string, unknown>) {
    const unknown = Object.keys(query).find((name) => !LIST_PARAMETERS.includes(name));
    if (unknown !== undefined)
      throw new ApiError(422, 'VALIDATION_FAILED', `Unknown query parameter ${unknown}; this route takes ${LIST_PARAMETERS.join(', ')}`, unknown);
    const text = (name: string) => {
      const value = query[name];
      if (value !== undefined && typeof value !== 'string') throw new ApiError(422, 'VALIDATION_FAILED', `${name} may be given once`, name);
      return value;
    };
    const page = await this.inbox.page(staff, {
      status: choiceParameter(text('status'), 'status', [...APPROVAL_STATUSES, 'all'] as const) ?? 'all',
      kind: choiceParameter(text('kind'), 'kind', APPROVAL_KINDS),
      limit: integerParameter(text('limit'), 'limit', 1, 200) ?? 50,
      offset: integerParameter(text('offset'), 'offset', 0, 1_000_000_000) ?? 0,
    });
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

import { Body, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiError, successEnvelope } from '../../infrastructure/http/api-error';
import { CurrentStaff } from '../auth/current-staff.decorator';
import { Roles } from '../auth/roles.decorator';
import { STAFF_ROLES, type StaffMember } from '../auth/staff-member';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { PathIds, PathIdsPipe } from '../http/identifier';
import { DEFAULT_PAGE_SIZE, ListPage, listQuery, page } from '../http/listing';
import { choice } from '../http/query-readers';
import { QueryString, QueryValues } from '../http/query-string';
import { BodyPipe } from '../http/back-office-body.pipe';
import { CreateStaffDto } from './staff.dto';
import { CreatedStaffView, STAFF_STATUSES, StaffRepository, StaffView, staffView, StaffWithTokenView } from './staff.repository';
import { BACK_OFFICE_ROUTES } from '../routes.public';

const LIST_QUERY = listQuery({ role: choice(STAFF_ROLES), status: choice(STAFF_STATUSES) }, 2);

@BackOfficeController()
@Roles()
export class StaffController {
  constructor(private readonly staff: StaffRepository) {}

  /** The token is in this reply only; the service keeps its hash. */
  @Post(BACK_OFFICE_ROUTES.staff)
  async create(@Body(BodyPipe) body: CreateStaffDto, @CurrentStaff() by: StaffMember) {
    const created = await this.staff.create(body.name, body.role, by.staffId);
    return successEnvelope('OK', { staff_id: created.staffId, name: created.name, role: created.role, token: created.token } satisfies CreatedStaffView);
  }

  /** Newest first. The built-in administrator (ADMIN_TOKEN) is not a row and is not listed. */
  @Get(BACK_OFFICE_ROUTES.staff)
  async list(@QueryString(LIST_QUERY) q: QueryValues<typeof LIST_QUERY>) {
    const limit = q.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.staff.list({ role: q.role, status: q.status, after: q.cursor }, limit);
    const { shown, next_cursor } = page(rows, limit, (r) => [r.sort_at, r.staff_id]);
    return successEnvelope('OK', { staff: shown.map(staffView), next_cursor } satisfies ListPage<'staff', StaffView>);
  }

  /** Refusing to disable oneself keeps the last administrator from locking everyone out by a slip. */
  @Post(BACK_OFFICE_ROUTES.staffDisable)
  @HttpCode(200)
  async disable(@Param(PathIdsPipe) { staff_id: staffId }: PathIds, @CurrentStaff() by: StaffMember) {
    if (staffId === by.staffId) throw new ApiError(409, 'CANNOT_DISABLE_SELF', 'A staff member cannot disable themselves');
    return successEnvelope('OK', staffView(await this.staff.disable(staffId, by.staffId)));
  }

  @Post(BACK_OFFICE_ROUTES.staffToken)
  @HttpCode(200)
  async rotateToken(@Param(PathIdsPipe) { staff_id: staffId }: PathIds, @CurrentStaff() by: StaffMember) {
    const { row, token } = await this.staff.rotateToken(staffId, by.staffId);
    return successEnvelope('OK', { ...staffView(row), token } satisfies StaffWithTokenView);
  }
}

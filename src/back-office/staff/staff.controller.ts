import { Body, Post } from '@nestjs/common';
import { successEnvelope } from '../../infrastructure/http/api-error';
import { CurrentStaff } from '../auth/current-staff.decorator';
import { Roles } from '../auth/roles.decorator';
import type { StaffMember } from '../auth/staff-member';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { BodyPipe } from '../http/validate-body';
import { CreateStaffDto } from './staff.dto';
import { StaffRepository } from './staff.repository';

@BackOfficeController('staff')
@Roles()
export class StaffController {
  constructor(private readonly staff: StaffRepository) {}

  /** The token is in this reply only; the service keeps its hash. */
  @Post()
  async create(@Body(BodyPipe) body: CreateStaffDto, @CurrentStaff() by: StaffMember) {
    const created = await this.staff.create(body.name, body.role, by.staffId);
    return successEnvelope('OK', { staff_id: created.staffId, name: created.name, role: created.role, token: created.token });
  }
}

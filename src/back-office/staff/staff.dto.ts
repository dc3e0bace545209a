import { IsIn } from 'class-validator';
import { Doc } from '../../infrastructure/http/field-rules';
import { IsDisplayName } from '../http/validators';
import { STAFF_ROLES, StaffRole } from '../auth/staff-member';

export class CreateStaffDto {
  @Doc({ examples: ['Ada Lovelace'] })
  @IsDisplayName()
  name!: string;

  @IsIn(STAFF_ROLES, { message: `role must be one of ${STAFF_ROLES.join(', ')}` })
  role!: StaffRole;
}

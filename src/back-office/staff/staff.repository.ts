import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { recordAudit } from '../audit/audit-trail';
import { inTransaction } from '../audit/transaction';
import { hashStaffToken, newStaffToken } from '../auth/staff-token';
import { StaffRole } from '../auth/staff-member';

export interface CreatedStaff {
  staffId: string;
  name: string;
  role: StaffRole;
  token: string;
}

@Injectable()
export class StaffRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async create(name: string, role: StaffRole, createdBy: string): Promise<CreatedStaff> {
    const staffId = `stf_${randomBytes(8).toString('hex')}`;
    const token = newStaffToken();
    await inTransaction(this.pool, async (client) => {
      await client.query('insert into staff (staff_id, name, role, token_hash, created_by) values ($1, $2, $3, $4, $5)', [
        staffId,
        name,
        role,
        hashStaffToken(token),
        createdBy,
      ]);
      await recordAudit(client, { staffId: createdBy, action: 'staff.created', target: `staff:${staffId}`, details: { name, role } });
    });
    return { staffId, name, role, token };
  }
}

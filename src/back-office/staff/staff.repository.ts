import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { ApiError } from '../../infrastructure/http/api-error';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { isoTimestamp } from '../../shared/clock';
import { recordAudit } from '../staff-audit-trail/audit-trail';
import { inTransaction } from '../../infrastructure/postgres/transactions';
import { hashStaffToken, newStaffToken } from '../auth/staff-token';
import { StaffRole } from '../auth/staff-member';
import { Conditions } from '../http/listing';
import { staffNameSql } from '../display-names/display-names';

export interface CreatedStaff {
  staffId: string;
  name: string;
  role: StaffRole;
  token: string;
}

export const STAFF_STATUSES = ['active', 'disabled'] as const;
export type StaffStatus = (typeof STAFF_STATUSES)[number];

interface StaffRow {
  staff_id: string;
  name: string;
  role: StaffRole;
  created_at: Date;
  created_by: string;
  created_by_name: string | null;
  disabled_at: Date | null;
  disabled_by: string | null;
  disabled_by_name: string | null;
  token_rotated_at: Date | null;
  sort_at: string;
}

const STAFF_COLUMNS = `staff_id, name, role, created_at, created_by, ${staffNameSql('staff.created_by')} as created_by_name,
  disabled_at, disabled_by, ${staffNameSql('staff.disabled_by')} as disabled_by_name, token_rotated_at, created_at::text as sort_at`;

/** A staff member as the back office shows it: never the token or its hash. */
export interface StaffView {
  staff_id: string;
  name: string;
  role: StaffRole;
  status: StaffStatus;
  created_at: string;
  created_by: string;
  created_by_name: string | null;
  disabled_at: string | null;
  disabled_by: string | null;
  disabled_by_name: string | null;
  token_rotated_at: string | null;
}

/** A member just created: the only reply, with a token rotation's, that carries their token. */
export interface CreatedStaffView {
  staff_id: string;
  name: string;
  role: StaffRole;
  token: string;
}

/** A member whose token was just rotated, with the new token. */
export interface StaffWithTokenView extends StaffView {
  token: string;
}

export const staffView = (row: StaffRow): StaffView => ({
  staff_id: row.staff_id,
  name: row.name,
  role: row.role,
  status: row.disabled_at ? 'disabled' : 'active',
  created_at: isoTimestamp(row.created_at),
  created_by: row.created_by,
  created_by_name: row.created_by_name,
  disabled_at: row.disabled_at && isoTimestamp(row.disabled_at),
  disabled_by: row.disabled_by,
  disabled_by_name: row.disabled_by_name,
  token_rotated_at: row.token_rotated_at && isoTimestamp(row.token_rotated_at),
});

const notFound = (staffId: string) => new ApiError(404, 'STAFF_NOT_FOUND', `No staff member ${staffId}`);

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

  /** Newest first; `after` is the (created_at, staff_id) of the last row of the previous page. */
  async list(filter: { role?: StaffRole; status?: StaffStatus; after?: string[] }, limit: number): Promise<StaffRow[]> {
    const where = new Conditions().addIf(filter.role, 'role = ?');
    if (filter.status) where.add(filter.status === 'active' ? 'disabled_at is null' : 'disabled_at is not null');
    if (filter.after) where.add('(created_at, staff_id) < (?::timestamptz, ?)', ...filter.after);
    const { rows } = await this.pool.query<StaffRow>(
      `select ${STAFF_COLUMNS} from staff ${where.where()} order by created_at desc, staff_id desc limit ${where.next(limit + 1)}`,
      where.values,
    );
    return rows;
  }

  /**
   * The member's token stops working from the next request, and so do the
   * console sessions it opened. Disabling twice changes nothing more.
   */
  async disable(staffId: string, disabledBy: string): Promise<StaffRow> {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<StaffRow>(`select ${STAFF_COLUMNS} from staff where staff_id = $1 for update`, [staffId]);
      if (!rows[0]) throw notFound(staffId);
      if (rows[0].disabled_at) return rows[0];
      const updated = await client.query<StaffRow>(`update staff set disabled_at = now(), disabled_by = $2 where staff_id = $1 returning ${STAFF_COLUMNS}`, [
        staffId,
        disabledBy,
      ]);
      await client.query('delete from console_sessions where staff_id = $1', [staffId]);
      await recordAudit(client, { staffId: disabledBy, action: 'staff.disabled', target: `staff:${staffId}`, details: {} });
      return updated.rows[0];
    });
  }

  /** A new token replaces the old one at once (shown in this reply only); the member's console sessions end. */
  async rotateToken(staffId: string, rotatedBy: string): Promise<{ row: StaffRow; token: string }> {
    const token = newStaffToken();
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<StaffRow>(`select ${STAFF_COLUMNS} from staff where staff_id = $1 for update`, [staffId]);
      if (!rows[0]) throw notFound(staffId);
      if (rows[0].disabled_at) throw new ApiError(409, 'STAFF_DISABLED', `Staff member ${staffId} is disabled: a disabled member gets no new token`);
      const updated = await client.query<StaffRow>(
        `update staff set token_hash = $2, token_rotated_at = now() where staff_id = $1 returning ${STAFF_COLUMNS}`,
        [staffId, hashStaffToken(token)],
      );
      await client.query('delete from console_sessions where staff_id = $1', [staffId]);
      await recordAudit(client, { staffId: rotatedBy, action: 'staff.token_rotated', target: `staff:${staffId}`, details: {} });
      return { row: updated.rows[0], token };
    });
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { BUILT_IN_ADMIN, BUILT_IN_ADMIN_NAME } from '../auth/staff-member';

/**
 * Staff and merchants are stored by id wherever they act or own something
 * (events, stamp columns, read models), and people read names. So a reply
 * that carries such an id carries the name beside it (`resolved_by` and
 * `resolved_by_name`, `merchant_id` and `merchant_name`), read by the
 * service whoever asks: a clerk may not list the staff, yet sees who
 * resolved an order. A name is null only for an id that names no one.
 */

/**
 * SQL for the name of the staff member whose id is in `column`, for a
 * select list or a returning clause. The column must be qualified by its
 * table (`merchants.updated_by`): unqualified, it would be read from the
 * staff table of the subquery.
 */
export const staffNameSql = (column: string): string =>
  `coalesce((select named.name from staff named where named.staff_id = ${column}), case when ${column} = '${BUILT_IN_ADMIN}' then '${BUILT_IN_ADMIN_NAME}' end)`;

/** The names of the ids a reply carries. */
export interface Names {
  merchant(merchantId: string): string | null;
  staff(staffId: string | null): string | null;
}

/** For replies built from the event store or from read models, which hold ids only: every name they need, in one query. */
@Injectable()
export class DisplayNames {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async of(ids: { merchants?: Iterable<string>; staff?: Iterable<string | null> }): Promise<Names> {
    const merchants = [...new Set(ids.merchants)];
    const staff = [...new Set(ids.staff)].filter((id): id is string => id !== null && id !== BUILT_IN_ADMIN);
    const found = new Map<string, string>();
    if (merchants.length + staff.length > 0) {
      const { rows } = await this.pool.query<{ kind: 'merchant' | 'staff'; id: string; name: string }>(
        `select 'merchant' as kind, merchant_id as id, name from merchants where merchant_id = any($1::text[])
         union all
         select 'staff', staff_id, name from staff where staff_id = any($2::text[])`,
        [merchants, staff],
      );
      for (const row of rows) found.set(`${row.kind}:${row.id}`, row.name);
    }
    return {
      merchant: (merchantId) => found.get(`merchant:${merchantId}`) ?? null,
      staff: (staffId) => (staffId === null ? null : staffId === BUILT_IN_ADMIN ? BUILT_IN_ADMIN_NAME : (found.get(`staff:${staffId}`) ?? null)),
    };
  }
}

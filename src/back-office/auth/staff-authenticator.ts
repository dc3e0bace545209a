import { Inject, Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { Pool } from 'pg';
import { AppConfig } from '../../config/config';
import { APP_CONFIG, PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { BUILT_IN_ADMIN, StaffMember, StaffRole } from './staff-member';
import { hashStaffToken } from './staff-token';

// RFC 6750 b64token; the scheme name is case-insensitive (RFC 9110).
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** Resolves an Authorization header to a staff member, or undefined. */
@Injectable()
export class StaffAuthenticator {
  private readonly adminTokenHash: Buffer;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.adminTokenHash = hashStaffToken(config.adminToken);
  }

  async authenticate(authorization: string | undefined): Promise<StaffMember | undefined> {
    const token = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
    if (token === undefined || token.length > 512) return undefined;
    // Comparing fixed-length digests keeps the comparison constant-time whatever the token's length.
    const hash = hashStaffToken(token);
    if (this.isAdminToken(hash)) return { staffId: BUILT_IN_ADMIN, role: 'admin' };
    const { rows } = await this.pool.query<{ staff_id: string; role: StaffRole }>(
      'select staff_id, role from staff where token_hash = $1 and disabled_at is null',
      [hash],
    );
    return rows[0] && { staffId: rows[0].staff_id, role: rows[0].role };
  }

  /** Whether a token's hash is ADMIN_TOKEN's; comparing fixed-length digests keeps it constant-time. */
  isAdminToken(hash: Buffer): boolean {
    return timingSafeEqual(hash, this.adminTokenHash);
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { BUILT_IN_ADMIN, BUILT_IN_ADMIN_NAME, StaffMember, StaffRole } from './staff-member';
import { StaffAuthenticator } from './staff-authenticator';
import { hashStaffToken } from './staff-token';

/** A session ends this long after sign-in, or after this long without a request, whichever comes first. */
export const SESSION_LIFETIME_SECONDS = 12 * 3600;
export const SESSION_IDLE_SECONDS = 30 * 60;

export interface ConsoleSession {
  staff: StaffMember;
  name: string;
  csrfToken: string;
}

/**
 * Sessions live in Postgres so that every instance knows them. A session is
 * worth no more than the token it was opened with: it ends everywhere at
 * once when the member is disabled or their token rotated, and the built-in
 * administrator's when ADMIN_TOKEN changes. The role is read from the staff
 * row on every request, never copied into the session.
 */
@Injectable()
export class ConsoleSessions {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly authenticator: StaffAuthenticator,
  ) {}

  /** `token` is the staff token just checked; the cookie value returned is not kept. */
  async open(staff: StaffMember, token: string): Promise<{ sessionId: string; csrfToken: string }> {
    const sessionId = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(32).toString('base64url');
    await this.pool.query('delete from console_sessions where created_at < now() - make_interval(secs => $1)', [SESSION_LIFETIME_SECONDS]);
    await this.pool.query('insert into console_sessions (id_hash, staff_id, token_hash, csrf_token) values ($1, $2, $3, $4)', [
      hashStaffToken(sessionId),
      staff.staffId,
      hashStaffToken(token),
      csrfToken,
    ]);
    return { sessionId, csrfToken };
  }

  async find(sessionId: string): Promise<ConsoleSession | undefined> {
    const { rows } = await this.pool.query<{
      staff_id: string;
      token_hash: Buffer;
      role: StaffRole | null;
      name: string | null;
      csrf_token: string;
      stale: boolean;
    }>(
      `select s.staff_id, s.token_hash, m.role, m.name, s.csrf_token, s.last_seen_at < now() - interval '1 minute' as stale
       from console_sessions s
       left join staff m on m.staff_id = s.staff_id and m.disabled_at is null and m.token_hash = s.token_hash
       where s.id_hash = $1
         and s.created_at > now() - make_interval(secs => $2)
         and s.last_seen_at > now() - make_interval(secs => $3)`,
      [hashStaffToken(sessionId), SESSION_LIFETIME_SECONDS, SESSION_IDLE_SECONDS],
    );
    const row = rows[0];
    if (!row) return undefined;
    const builtIn = row.staff_id === BUILT_IN_ADMIN;
    if (builtIn ? !this.authenticator.isAdminToken(row.token_hash) : row.role === null) return undefined;
    // One write a minute at most keeps the idle clock without a write per request.
    if (row.stale) await this.pool.query('update console_sessions set last_seen_at = now() where id_hash = $1', [hashStaffToken(sessionId)]);
    return {
      staff: { staffId: row.staff_id, role: builtIn ? 'admin' : row.role! },
      name: builtIn ? BUILT_IN_ADMIN_NAME : row.name!,
      csrfToken: row.csrf_token,
    };
  }

  async close(sessionId: string): Promise<void> {
    await this.pool.query('delete from console_sessions where id_hash = $1', [hashStaffToken(sessionId)]);
  }
}

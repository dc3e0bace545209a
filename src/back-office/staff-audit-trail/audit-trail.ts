import { Inject, Injectable } from '@nestjs/common';
import { Pool, PoolClient } from 'pg';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';

export interface AuditEntry {
  staffId: string;
  /** `<thing>.<past tense>`, e.g. merchant.created. */
  action: string;
  /** `<kind>:<id>`, e.g. merchant:mch_0123456789abcdef. */
  target: string;
  /** What changed. Never a secret or a token. */
  details: Record<string, unknown>;
}

/** Appends to back_office_audit inside the caller's transaction, so the row exists exactly when the change does. */
export async function recordAudit(client: Pool | PoolClient, entry: AuditEntry): Promise<void> {
  await client.query('insert into back_office_audit (staff_id, action, target, details) values ($1, $2, $3, $4)', [
    entry.staffId,
    entry.action,
    entry.target,
    JSON.stringify(entry.details),
  ]);
}

/** For a change recorded elsewhere (an event, the callback log): the audit row alone, one statement of its own. */
@Injectable()
export class AuditTrail {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async record(entry: AuditEntry): Promise<void> {
    await recordAudit(this.pool, entry);
  }
}

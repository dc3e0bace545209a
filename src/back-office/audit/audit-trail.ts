import { PoolClient } from 'pg';

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
export async function recordAudit(client: PoolClient, entry: AuditEntry): Promise<void> {
  await client.query('insert into back_office_audit (staff_id, action, target, details) values ($1, $2, $3, $4)', [
    entry.staffId,
    entry.action,
    entry.target,
    JSON.stringify(entry.details),
  ]);
}

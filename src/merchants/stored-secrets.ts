import { Pool } from 'pg';
import { AppSecretCipher } from './app-secret.cipher';

interface SealedRow {
  merchant_id: string;
  app_secret_enc: Buffer;
}

/** What the configured keys make of the stored secrets. */
export interface SecretsSurvey {
  total: number;
  /** Opened only with a key from SECRETS_KEY_PREVIOUS. */
  underPrevious: number;
  /** Merchant ids whose secret no configured key opens. */
  unopenable: string[];
}

const BATCH = 1000;

/**
 * Every merchant's sealed secret, a batch at a time in merchant id order
 * (keyset paging: no long transaction, no growing offset). A database the
 * service has not set up yet has no merchants.
 */
async function* sealedSecrets(pool: Pool): AsyncGenerator<SealedRow[]> {
  const { rows: table } = await pool.query<{ present: boolean }>(`select to_regclass('merchants') is not null as present`);
  if (!table[0].present) return;
  for (let after = ''; ; ) {
    const { rows } = await pool.query<SealedRow>(
      `select merchant_id, app_secret_enc from merchants where merchant_id > $1 order by merchant_id limit $2`,
      [after, BATCH],
    );
    if (rows.length === 0) return;
    yield rows;
    after = rows[rows.length - 1].merchant_id;
  }
}

/**
 * Tries every stored secret, not a sample, so no merchant is left to fail at
 * its first request. AES-GCM is cheap: about 10 µs per secret under the
 * current key and 30 µs when a wrong key is tried first (measured on the
 * 2-core development machine), so 100,000 merchants add about a second.
 * `underOldKey` is called for each secret that only an old key opens.
 */
export async function surveySecrets(
  pool: Pool,
  cipher: AppSecretCipher,
  underOldKey: (row: SealedRow, secret: string) => Promise<void> = async () => undefined,
): Promise<SecretsSurvey> {
  const survey: SecretsSurvey = { total: 0, underPrevious: 0, unopenable: [] };
  for await (const rows of sealedSecrets(pool)) {
    for (const row of rows) {
      survey.total++;
      const opened = cipher.open(row.app_secret_enc);
      if (!opened) survey.unopenable.push(row.merchant_id);
      else if (!opened.current) {
        survey.underPrevious++;
        await underOldKey(row, opened.secret);
      }
    }
  }
  return survey;
}

/**
 * Seals again under the current key every secret that only an old key opens.
 * Safe beside running instances that hold both keys (the secret itself does
 * not change), and safe to repeat: a second run finds nothing to do. The
 * update only applies if the row still holds what was read, so a concurrent
 * change is never overwritten.
 */
export async function resealSecrets(pool: Pool, cipher: AppSecretCipher): Promise<SecretsSurvey & { resealed: number }> {
  let resealed = 0;
  const survey = await surveySecrets(pool, cipher, async (row, secret) => {
    const { rowCount } = await pool.query(`update merchants set app_secret_enc = $3 where merchant_id = $1 and app_secret_enc = $2`, [
      row.merchant_id,
      row.app_secret_enc,
      cipher.encrypt(secret),
    ]);
    resealed += rowCount ?? 0;
  });
  return { ...survey, resealed };
}

/** "mch_a, mch_b, mch_c and 7 more" */
export function someOf(ids: readonly string[], shown = 5): string {
  return ids.length <= shown ? ids.join(', ') : `${ids.slice(0, shown).join(', ')} and ${ids.length - shown} more`;
}

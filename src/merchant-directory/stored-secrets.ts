import { Pool } from 'pg';
import { AppSecretCipher } from './app-secret.cipher';

/** One sealed secret: a merchant's current one, or the one a rotation replaced while its overlap lasts. */
interface SealedSecret {
  merchant_id: string;
  column: 'app_secret_enc' | 'previous_app_secret_enc';
  sealed: Buffer;
}

/** What the configured keys make of the stored secrets. */
export interface SecretsSurvey {
  merchants: number;
  /** Sealed secrets: one per merchant, two while a rotation's overlap lasts. */
  total: number;
  /** Secrets (a rotation's replaced one included) opened only with a key from SECRETS_KEY_PREVIOUS. */
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
async function* sealedSecrets(pool: Pool): AsyncGenerator<SealedSecret[]> {
  const { rows: table } = await pool.query<{ present: boolean }>(`select to_regclass('merchants') is not null as present`);
  if (!table[0].present) return;
  for (let after = ''; ;) {
    const { rows } = await pool.query<{ merchant_id: string; current: Buffer; previous: Buffer | null }>(
      `select merchant_id, app_secret_enc as current,
         case when previous_app_secret_valid_until > now() then previous_app_secret_enc end as previous
       from merchants where merchant_id > $1 order by merchant_id limit $2`,
      [after, BATCH],
    );
    if (rows.length === 0) return;
    yield rows.flatMap(({ merchant_id, current, previous }): SealedSecret[] => [
      { merchant_id, column: 'app_secret_enc', sealed: current },
      ...(previous ? [{ merchant_id, column: 'previous_app_secret_enc' as const, sealed: previous }] : []),
    ]);
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
  underOldKey: (row: SealedSecret, secret: string) => Promise<void> = async () => undefined,
): Promise<SecretsSurvey> {
  const survey: SecretsSurvey = { merchants: 0, total: 0, underPrevious: 0, unopenable: [] };
  for await (const rows of sealedSecrets(pool)) {
    for (const row of rows) {
      survey.total++;
      if (row.column === 'app_secret_enc') survey.merchants++;
      const opened = cipher.open(row.sealed);
      if (!opened) {
        // A merchant's secrets arrive together: name the merchant once.
        if (survey.unopenable.at(-1) !== row.merchant_id) survey.unopenable.push(row.merchant_id);
      } else if (!opened.current) {
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
    // row.column is one of two fixed names, never input.
    const { rowCount } = await pool.query(`update merchants set ${row.column} = $3 where merchant_id = $1 and ${row.column} = $2`, [
      row.merchant_id,
      row.sealed,
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

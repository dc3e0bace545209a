import { Inject, Injectable } from '@nestjs/common';
import { Pool, PoolClient } from 'pg';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { AppSecretCipher } from '../../merchant-directory';
import { recordAudit } from '../staff-audit-trail/audit-trail';
import { inTransaction } from '../../infrastructure/postgres/transactions';
import { Conditions, containing } from '../http/listing';
import { MerchantCredentials } from './merchant-credentials';
import { MerchantStatus } from './merchant.dto';
import { MERCHANT_COLUMNS, MerchantRow, thresholdText } from './merchant.view';

export interface NewMerchant {
  name: string;
  currency: string;
  callbackUrl: string | null;
  ipWhitelist: string[];
  rateLimitPerSecond: number;
  /** Minor units; null for no low-balance alert. */
  lowBalanceThreshold: bigint | null;
}

export interface MerchantChanges {
  callback_url?: string | null;
  ip_whitelist?: string[];
  status?: MerchantStatus;
  rate_limit_per_second?: number;
  /** Minor units; null removes the threshold. */
  low_balance_threshold?: bigint | null;
}

/** The columns a PATCH may set: the SET clause is built from this list only. */
const CHANGEABLE: readonly (keyof MerchantChanges)[] = ['callback_url', 'ip_whitelist', 'status', 'rate_limit_per_second', 'low_balance_threshold'];

/** A change as the statement sends it: minor units as text, the rest as given. */
const columnValue = (value: unknown) => (typeof value === 'bigint' ? value.toString() : value);

/** A column's value as the audit trail records it: money as the API writes it, the rest as stored. */
function audited(field: keyof MerchantChanges, value: unknown): unknown {
  return field === 'low_balance_threshold' ? thresholdText(value as string | bigint | null) : value;
}

@Injectable()
export class MerchantsRepository {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly cipher: AppSecretCipher,
  ) {}

  /** Inserts the merchant and its audit row; its wallet must be open already (see MerchantsController.create). */
  async create(merchant: NewMerchant, credentials: MerchantCredentials, createdBy: string): Promise<MerchantRow> {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<MerchantRow>(
        `insert into merchants (merchant_id, name, currency, api_key, app_secret_enc, callback_url, ip_whitelist, rate_limit_per_second,
                                low_balance_threshold, created_by, updated_by)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
         returning ${MERCHANT_COLUMNS}`,
        [
          credentials.merchantId,
          merchant.name,
          merchant.currency,
          credentials.apiKey,
          this.cipher.encrypt(credentials.appSecret),
          merchant.callbackUrl,
          merchant.ipWhitelist,
          merchant.rateLimitPerSecond,
          merchant.lowBalanceThreshold?.toString() ?? null,
          createdBy,
        ],
      );
      await recordAudit(client, {
        staffId: createdBy,
        action: 'merchant.created',
        target: `merchant:${credentials.merchantId}`,
        details: {
          name: merchant.name,
          currency: merchant.currency,
          callback_url: merchant.callbackUrl,
          ip_whitelist: merchant.ipWhitelist,
          rate_limit_per_second: merchant.rateLimitPerSecond,
          low_balance_threshold: thresholdText(merchant.lowBalanceThreshold),
        },
      });
      return rows[0];
    });
  }

  async find(merchantId: string): Promise<MerchantRow | undefined> {
    const { rows } = await this.pool.query<MerchantRow>(`select ${MERCHANT_COLUMNS} from merchants where merchant_id = $1`, [merchantId]);
    return rows[0];
  }

  /** Newest first; `after` is the (created_at, merchant_id) of the last row of the previous page. */
  async list(filter: { name?: string; status?: MerchantStatus; after?: string[] }, limit: number): Promise<(MerchantRow & { sort_at: string })[]> {
    const where = new Conditions().addIf(filter.name === undefined ? undefined : containing(filter.name), 'name ilike ?').addIf(filter.status, 'status = ?');
    if (filter.after) where.add('(created_at, merchant_id) < (?::timestamptz, ?)', ...filter.after);
    const { rows } = await this.pool.query<MerchantRow & { sort_at: string }>(
      `select ${MERCHANT_COLUMNS}, created_at::text as sort_at from merchants ${where.where()}
       order by created_at desc, merchant_id desc limit ${where.next(limit + 1)}`,
      where.values,
    );
    return rows;
  }

  /** Applies the changes and records each field's old and new value; undefined for an unknown merchant. */
  async update(merchantId: string, changes: MerchantChanges, updatedBy: string): Promise<MerchantRow | undefined> {
    return inTransaction(this.pool, async (client) => {
      const before = await lockMerchant(client, merchantId);
      if (!before) return undefined;
      const fields = CHANGEABLE.filter((field) => changes[field] !== undefined);
      const assignments = fields.map((field, i) => `${field} = $${i + 3}`);
      const { rows } = await client.query<MerchantRow>(
        `update merchants set ${[...assignments, 'updated_at = now()', 'updated_by = $2'].join(', ')}
         where merchant_id = $1 returning ${MERCHANT_COLUMNS}`,
        [merchantId, updatedBy, ...fields.map((field) => columnValue(changes[field]))],
      );
      await recordAudit(client, {
        staffId: updatedBy,
        action: 'merchant.updated',
        target: `merchant:${merchantId}`,
        details: {
          changes: Object.fromEntries(fields.map((field) => [field, { from: audited(field, before[field]), to: audited(field, changes[field]) }])),
        },
      });
      return rows[0];
    });
  }

  /**
   * Replaces the app secret. With an overlap, the replaced secret keeps
   * verifying requests until now() + overlap; a second rotation within the
   * overlap replaces that older secret, so at most two ever verify.
   */
  async rotateAppSecret(merchantId: string, newSecret: string, overlapSeconds: number, rotatedBy: string): Promise<MerchantRow | undefined> {
    return inTransaction(this.pool, async (client) => {
      if (!(await lockMerchant(client, merchantId))) return undefined;
      const { rows } = await client.query<MerchantRow>(
        `update merchants set
           previous_app_secret_enc         = case when $3 > 0 then app_secret_enc end,
           previous_app_secret_valid_until = case when $3 > 0 then now() + make_interval(secs => $3) end,
           app_secret_enc = $2, updated_at = now(), updated_by = $4
         where merchant_id = $1 returning ${MERCHANT_COLUMNS}`,
        [merchantId, this.cipher.encrypt(newSecret), overlapSeconds, rotatedBy],
      );
      await recordAudit(client, {
        staffId: rotatedBy,
        action: 'merchant.app_secret_rotated',
        target: `merchant:${merchantId}`,
        details: { overlap_seconds: overlapSeconds, previous_secret_valid_until: rows[0].previous_app_secret_valid_until },
      });
      return rows[0];
    });
  }

  /** Ends a rotation's overlap now: only the current secret verifies from the next request on. */
  async revokePreviousAppSecret(merchantId: string, revokedBy: string): Promise<MerchantRow | undefined> {
    return inTransaction(this.pool, async (client) => {
      const before = await lockMerchant(client, merchantId);
      if (!before) return undefined;
      const { rows } = await client.query<MerchantRow>(
        `update merchants set previous_app_secret_enc = null, previous_app_secret_valid_until = null, updated_at = now(), updated_by = $2
         where merchant_id = $1 returning ${MERCHANT_COLUMNS}`,
        [merchantId, revokedBy],
      );
      await recordAudit(client, {
        staffId: revokedBy,
        action: 'merchant.previous_app_secret_revoked',
        target: `merchant:${merchantId}`,
        details: { was_valid_until: before.previous_app_secret_valid_until },
      });
      return rows[0];
    });
  }
}

async function lockMerchant(client: PoolClient, merchantId: string): Promise<MerchantRow | undefined> {
  const { rows } = await client.query<MerchantRow>(`select ${MERCHANT_COLUMNS} from merchants where merchant_id = $1 for update`, [merchantId]);
  return rows[0];
}

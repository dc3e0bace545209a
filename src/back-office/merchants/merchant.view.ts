import { isoTimestamp } from '../../shared/clock';
import { formatAmount } from '../../shared/money';
import { staffNameSql } from '../display-names/display-names';
import { MerchantStatus } from './merchant.dto';

export interface MerchantRow {
  merchant_id: string;
  name: string;
  currency: string;
  api_key: string;
  callback_url: string | null;
  ip_whitelist: string[];
  status: MerchantStatus;
  rate_limit_per_second: number;
  /** Minor units, as Postgres returns a bigint; null: no low-balance alert. */
  low_balance_threshold: string | null;
  created_at: Date;
  created_by: string;
  created_by_name: string | null;
  updated_at: Date;
  updated_by: string;
  updated_by_name: string | null;
  previous_app_secret_valid_until: Date | null;
}

/** Every column but the encrypted secret, which never leaves the service after creation, and the names of who created and last changed it. */
export const MERCHANT_COLUMNS = `merchant_id, name, currency, api_key, callback_url, ip_whitelist, status, rate_limit_per_second, low_balance_threshold,
  created_at, created_by, ${staffNameSql('merchants.created_by')} as created_by_name,
  updated_at, updated_by, ${staffNameSql('merchants.updated_by')} as updated_by_name, previous_app_secret_valid_until`;

/**
 * The merchant as the back office shows it: its row, with the threshold as
 * money and times as ISO text. The API key identifies; it is the app secret
 * that signs, and that is never shown again.
 */
export interface MerchantView extends Omit<MerchantRow, 'low_balance_threshold' | 'created_at' | 'updated_at' | 'previous_app_secret_valid_until'> {
  /** Money in the wallet's currency; null when none is set. */
  low_balance_threshold: string | null;
  created_at: string;
  updated_at: string;
  previous_secret_valid_until: string | null;
}

/** A merchant just created, or whose secret was just rotated: the only replies that carry the app secret. */
export interface MerchantWithSecretView extends MerchantView {
  app_secret: string;
}

export function merchantView(row: MerchantRow): MerchantView {
  return {
    merchant_id: row.merchant_id,
    name: row.name,
    currency: row.currency,
    api_key: row.api_key,
    callback_url: row.callback_url,
    ip_whitelist: row.ip_whitelist,
    status: row.status,
    rate_limit_per_second: row.rate_limit_per_second,
    // Under this available balance the merchant is listed on the operations dashboard and its gauge reads 1.
    low_balance_threshold: thresholdText(row.low_balance_threshold),
    created_at: isoTimestamp(row.created_at),
    created_by: row.created_by,
    created_by_name: row.created_by_name,
    updated_at: isoTimestamp(row.updated_at),
    updated_by: row.updated_by,
    updated_by_name: row.updated_by_name,
    // Until this instant the secret replaced by the last rotation still verifies requests; null when none does.
    previous_secret_valid_until: stillValid(row.previous_app_secret_valid_until),
  };
}

function stillValid(until: Date | null): string | null {
  return until && until.getTime() > Date.now() ? isoTimestamp(until) : null;
}

/** A threshold in minor units (as stored) as the API writes money; null stays null. */
export const thresholdText = (minor: string | bigint | null): string | null => (minor === null ? null : formatAmount(BigInt(minor)));

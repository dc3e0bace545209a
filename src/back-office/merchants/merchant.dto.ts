import { IsIn, IsInt, Matches, Max, Min } from 'class-validator';
import { Doc, Optional, OptionalNullable, Rules } from '../../infrastructure/http/field-rules';
import { IsDisplayName, IsHttpUrl, IsIpWhitelist, IsPositiveAmount } from '../http/validators';

export const MERCHANT_STATUSES = ['active', 'suspended'] as const;
export type MerchantStatus = (typeof MERCHANT_STATUSES)[number];

export const DEFAULT_RATE_LIMIT = 100;
const MAX_RATE_LIMIT = 100_000;

// The settings both the create and the update body take, each rule written once.
const CallbackUrl = () => Rules(OptionalNullable(), IsHttpUrl());
const IpWhitelist = () => Rules(Optional(), IsIpWhitelist());
const RateLimitPerSecond = () => Rules(Optional(), IsInt({ message: 'rate_limit_per_second must be an integer' }), Min(1), Max(MAX_RATE_LIMIT));
/** An amount in the merchant's currency; null for no alert. */
const LowBalanceThreshold = () =>
  Rules(Doc({ description: "A positive amount in the merchant's currency; null for no low-balance alert" }), OptionalNullable(), IsPositiveAmount());

// Decorators run bottom-up: the type check is written first so that its message wins.
export class CreateMerchantDto {
  @IsDisplayName()
  name!: string;

  @Doc({ examples: ['USD'] })
  @Optional()
  @Matches(/^[A-Z]{3}$/, { message: 'currency must be 3 uppercase letters (ISO 4217), e.g. USD' })
  currency?: string;

  @CallbackUrl()
  callback_url?: string | null;

  @IpWhitelist()
  ip_whitelist?: string[];

  @RateLimitPerSecond()
  rate_limit_per_second?: number;

  @LowBalanceThreshold()
  low_balance_threshold?: string | null;
}

export class UpdateMerchantDto {
  @CallbackUrl()
  callback_url?: string | null;

  @IpWhitelist()
  ip_whitelist?: string[];

  @Optional()
  @IsIn(MERCHANT_STATUSES, { message: 'status must be active or suspended' })
  status?: MerchantStatus;

  @RateLimitPerSecond()
  rate_limit_per_second?: number;

  @LowBalanceThreshold()
  low_balance_threshold?: string | null;
}

/** At most 30 days: long enough for any merchant's deployment, short enough that a forgotten overlap ends. */
export const MAX_SECRET_OVERLAP_SECONDS = 30 * 86_400;

export class RotateAppSecretDto {
  @IsInt({ message: 'overlap_seconds must be an integer (0 ends the old secret at once)' })
  @Min(0)
  @Max(MAX_SECRET_OVERLAP_SECONDS)
  overlap_seconds!: number;
}

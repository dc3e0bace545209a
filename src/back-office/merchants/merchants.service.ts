import { Inject, Injectable, Logger } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { refusedCallbackHost } from '../../callbacks';
import { AppConfig } from '../../config/config';
import { Warning } from '../../infrastructure/http/api-error';
import { APP_CONFIG } from '../../infrastructure/infrastructure.tokens';
import { newMerchantCredentials } from './merchant-credentials';
import { CreateMerchantDto, DEFAULT_RATE_LIMIT, UpdateMerchantDto } from './merchant.dto';
import { MerchantRow } from './merchant.view';
import { MerchantChanges, MerchantsRepository } from './merchants.repository';
import { parseAmount } from '../../shared/money';
import { storedCallbackUrl } from '../http/validators';
import { OpenWallet } from '../../ledger/commands/open-wallet/open-wallet.command';

/** A change to a merchant, and what staff should know about it. */
export interface MerchantChange {
  row: MerchantRow;
  warnings: Warning[];
}

/** Onboarding and settings changes: the rules around the merchants table that the controller only calls. */
@Injectable()
export class MerchantsService {
  private readonly logger = new Logger('Merchants');

  constructor(
    private readonly merchants: MerchantsRepository,
    private readonly commands: CommandBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The wallet is opened first and the merchant inserted after it, so a crash
   * in between leaves a wallet under an id nobody knows (harmless), never a
   * merchant without a wallet. The other way round, inside one transaction,
   * would hold a pooled connection while the event store append waits for
   * another one: enough concurrent requests would exhaust the pool and stall.
   */
  async create(body: CreateMerchantDto, staffId: string): Promise<MerchantChange & { appSecret: string }> {
    const credentials = newMerchantCredentials();
    const merchant = {
      name: body.name,
      currency: body.currency ?? 'USD',
      callbackUrl: body.callback_url ? storedCallbackUrl(body.callback_url) : null,
      ipWhitelist: body.ip_whitelist ?? [],
      rateLimitPerSecond: body.rate_limit_per_second ?? DEFAULT_RATE_LIMIT,
      lowBalanceThreshold: minorUnits(body.low_balance_threshold) ?? null,
    };
    await this.commands.execute(new OpenWallet(credentials.merchantId, merchant.currency));
    const row = await this.merchants.create(merchant, credentials, staffId);
    return { row, appSecret: credentials.appSecret, warnings: this.callbackWarnings(row.merchant_id, row.callback_url) };
  }

  async update(merchantId: string, body: UpdateMerchantDto, staffId: string): Promise<MerchantChange | undefined> {
    const { low_balance_threshold: threshold, callback_url: callbackUrl, ...rest } = body;
    const settings: MerchantChanges = callbackUrl === undefined ? rest : { ...rest, callback_url: callbackUrl && storedCallbackUrl(callbackUrl) };
    const changes: MerchantChanges = threshold === undefined ? settings : { ...settings, low_balance_threshold: minorUnits(threshold) };
    const row = await this.merchants.update(merchantId, changes, staffId);
    return row && { row, warnings: this.callbackWarnings(merchantId, settings.callback_url) };
  }

  /**
   * A callback URL on a private or loopback address is stored as given (the
   * setting may change, and DNS between now and a callback), but said to be
   * refused while CALLBACK_ALLOW_PRIVATE_NETWORKS is off: in the reply, and in
   * the service log for whoever runs it (the line carries the request's id
   * without being told: request-context.ts).
   */
  private callbackWarnings(merchantId: string, callbackUrl: string | null | undefined): Warning[] {
    const refused = callbackUrl && !this.config.callbackAllowPrivateNetworks ? refusedCallbackHost(callbackUrl) : undefined;
    if (refused === undefined) return [];
    const message = `callbacks to ${callbackUrl} will be refused: ${refused}, and the service runs without CALLBACK_ALLOW_PRIVATE_NETWORKS=true`;
    this.logger.warn(`merchant ${merchantId}: ${message}`);
    return [{ code: 'CALLBACK_URL_NOT_PUBLIC', field: 'callback_url', message }];
  }
}

/** A threshold as the body gives it (validated: a positive amount) in minor units; null and absent stay as they are. */
function minorUnits(amount: string | null | undefined): bigint | null | undefined {
  return typeof amount === 'string' ? parseAmount(amount) : amount;
}

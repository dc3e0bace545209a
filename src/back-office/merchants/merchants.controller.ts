import { Body, Delete, Get, HttpCode, Inject, Logger, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { AppConfig } from '../../config/config';
import { refusedCallbackHost } from '../../callbacks';
import { ApiError, successEnvelope, Warning } from '../../infrastructure/http/api-error';
import { APP_CONFIG } from '../../infrastructure/infrastructure.tokens';
import { CurrentStaff } from '../auth/current-staff.decorator';
import { Roles } from '../auth/roles.decorator';
import type { StaffMember } from '../auth/staff-member';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { PathIds, PathIdsPipe } from '../http/identifier';
import { choiceParameter, decodeCursor, page, pageSize, queryParameters, textParameter } from '../http/listing';
import { BodyPipe } from '../http/validate-body';
import { newMerchantCredentials } from './merchant-credentials';
import { CreateMerchantDto, DEFAULT_RATE_LIMIT, MERCHANT_STATUSES, RotateAppSecretDto, UpdateMerchantDto } from './merchant.dto';
import { merchantView } from './merchant.view';
import { MerchantsRepository } from './merchants.repository';
import { OpenWallet } from './open-wallet.command';
import { requestFields } from '../../infrastructure/logging/request-context';
import { BACK_OFFICE_ROUTES } from '../routes.public';

const notFound = (merchantId: string) => new ApiError(404, 'MERCHANT_NOT_FOUND', `No merchant ${merchantId}`);

@BackOfficeController()
@Roles()
export class MerchantsController {
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
   * The app secret is in this reply only; the service keeps it encrypted.
   */
  @Post(BACK_OFFICE_ROUTES.merchants)
  async create(@Body(BodyPipe) body: CreateMerchantDto, @CurrentStaff() by: StaffMember, @Req() request: object) {
    const credentials = newMerchantCredentials();
    const merchant = {
      name: body.name,
      currency: body.currency ?? 'USD',
      callbackUrl: body.callback_url ?? null,
      ipWhitelist: body.ip_whitelist ?? [],
      rateLimitPerSecond: body.rate_limit_per_second ?? DEFAULT_RATE_LIMIT,
    };
    await this.commands.execute(new OpenWallet(credentials.merchantId, merchant.currency));
    const row = await this.merchants.create(merchant, credentials, by.staffId);
    return successEnvelope(
      'OK',
      { ...merchantView(row), app_secret: credentials.appSecret },
      this.callbackWarnings(row.merchant_id, body.callback_url, request),
    );
  }

  /** Newest first, `name` a case-insensitive substring. Every role may read merchants, to find the one a ticket or statement is about. */
  @Get(BACK_OFFICE_ROUTES.merchants)
  @Roles('reconciler', 'auditor')
  async list(@Query() query: Record<string, unknown>) {
    const q = queryParameters(query, ['name', 'status']);
    const limit = pageSize(q.limit);
    const rows = await this.merchants.list(
      { name: textParameter(q.name, 'name'), status: choiceParameter(q.status, 'status', MERCHANT_STATUSES), after: decodeCursor(q.cursor, 2) },
      limit,
    );
    const { shown, next_cursor } = page(rows, limit, (r) => [r.sort_at, r.merchant_id]);
    return successEnvelope('OK', { merchants: shown.map(merchantView), next_cursor });
  }

  @Get(BACK_OFFICE_ROUTES.merchant)
  @Roles('reconciler', 'auditor')
  async get(@Param(PathIdsPipe) { merchant_id: merchantId }: PathIds) {
    const row = await this.merchants.find(merchantId);
    if (!row) throw notFound(merchantId);
    return successEnvelope('OK', merchantView(row));
  }

  @Patch(BACK_OFFICE_ROUTES.merchant)
  async update(
    @Param(PathIdsPipe) { merchant_id: merchantId }: PathIds,
    @Body(BodyPipe) body: UpdateMerchantDto,
    @CurrentStaff() by: StaffMember,
    @Req() request: object,
  ) {
    if (Object.keys(body).length === 0) {
      throw new ApiError(422, 'VALIDATION_FAILED', 'Name at least one of callback_url, ip_whitelist, status, rate_limit_per_second');
    }
    const row = await this.merchants.update(merchantId, body, by.staffId);
    if (!row) throw notFound(merchantId);
    return successEnvelope('OK', merchantView(row), this.callbackWarnings(merchantId, body.callback_url, request));
  }

  /**
   * A callback URL on a private or loopback address is stored as given (the
   * setting may change, and DNS between now and a callback), but said to be
   * refused while CALLBACK_ALLOW_PRIVATE_NETWORKS is off: in the reply, and in
   * the service log for whoever runs it.
   */
  private callbackWarnings(merchantId: string, callbackUrl: string | null | undefined, request: object): Warning[] {
    const refused = callbackUrl && !this.config.callbackAllowPrivateNetworks ? refusedCallbackHost(callbackUrl) : undefined;
    if (refused === undefined) return [];
    const message = `callbacks to ${callbackUrl} will be refused: ${refused}, and the service runs without CALLBACK_ALLOW_PRIVATE_NETWORKS=true`;
    this.logger.warn({ message: `merchant ${merchantId}: ${message}`, ...requestFields(request) });
    return [{ code: 'CALLBACK_URL_NOT_PUBLIC', field: 'callback_url', message }];
  }

  /** The new secret is in this reply only, like a new merchant's. Callbacks are signed with it from now on. */
  @Post(BACK_OFFICE_ROUTES.appSecret)
  @HttpCode(200)
  async rotateAppSecret(@Param(PathIdsPipe) { merchant_id: merchantId }: PathIds, @Body(BodyPipe) body: RotateAppSecretDto, @CurrentStaff() by: StaffMember) {
    const { appSecret } = newMerchantCredentials();
    const row = await this.merchants.rotateAppSecret(merchantId, appSecret, body.overlap_seconds, by.staffId);
    if (!row) throw notFound(merchantId);
    return successEnvelope('OK', { ...merchantView(row), app_secret: appSecret });
  }

  @Delete(BACK_OFFICE_ROUTES.previousAppSecret)
  async revokePreviousAppSecret(@Param(PathIdsPipe) { merchant_id: merchantId }: PathIds, @CurrentStaff() by: StaffMember) {
    const row = await this.merchants.revokePreviousAppSecret(merchantId, by.staffId);
    if (!row) throw notFound(merchantId);
    return successEnvelope('OK', merchantView(row));
  }
}

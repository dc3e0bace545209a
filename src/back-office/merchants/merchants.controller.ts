import { Body, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiError, successEnvelope } from '../../infrastructure/http/api-error';
import { CurrentStaff } from '../auth/current-staff.decorator';
import { Roles } from '../auth/roles.decorator';
import type { StaffMember } from '../auth/staff-member';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { PathIds, PathIdsPipe } from '../http/identifier';
import { DEFAULT_PAGE_SIZE, ListPage, listQuery, page } from '../http/listing';
import { choice, text } from '../http/query-readers';
import { QueryString, QueryValues } from '../http/query-string';
import { BodyPipe } from '../http/back-office-body.pipe';
import { newMerchantCredentials } from './merchant-credentials';
import { CreateMerchantDto, MERCHANT_STATUSES, RotateAppSecretDto, UpdateMerchantDto } from './merchant.dto';
import { MerchantView, merchantView, MerchantWithSecretView } from './merchant.view';
import { MerchantsRepository } from './merchants.repository';
import { MerchantsService } from './merchants.service';
import { BACK_OFFICE_ROUTES } from '../routes.public';

const LIST_QUERY = listQuery({ name: text(128), status: choice(MERCHANT_STATUSES) }, 2);

const notFound = (merchantId: string) => new ApiError(404, 'MERCHANT_NOT_FOUND', `No merchant ${merchantId}`);

@BackOfficeController()
@Roles()
export class MerchantsController {
  constructor(
    private readonly merchants: MerchantsRepository,
    private readonly service: MerchantsService,
  ) {}

  /** The app secret is in this reply only; the service keeps it encrypted. */
  @Post(BACK_OFFICE_ROUTES.merchants)
  async create(@Body(BodyPipe) body: CreateMerchantDto, @CurrentStaff() by: StaffMember) {
    const { row, appSecret, warnings } = await this.service.create(body, by.staffId);
    return successEnvelope('OK', { ...merchantView(row), app_secret: appSecret } satisfies MerchantWithSecretView, warnings);
  }

  /** Newest first, `name` a case-insensitive substring. Every role may read merchants, to find the one a ticket or statement is about. */
  @Get(BACK_OFFICE_ROUTES.merchants)
  @Roles('reconciler', 'auditor')
  async list(@QueryString(LIST_QUERY) q: QueryValues<typeof LIST_QUERY>) {
    const limit = q.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.merchants.list({ name: q.name, status: q.status, after: q.cursor }, limit);
    const { shown, next_cursor } = page(rows, limit, (r) => [r.sort_at, r.merchant_id]);
    return successEnvelope('OK', { merchants: shown.map(merchantView), next_cursor } satisfies ListPage<'merchants', MerchantView>);
  }

  @Get(BACK_OFFICE_ROUTES.merchant)
  @Roles('reconciler', 'auditor')
  async get(@Param(PathIdsPipe) { merchant_id: merchantId }: PathIds) {
    const row = await this.merchants.find(merchantId);
    if (!row) throw notFound(merchantId);
    return successEnvelope('OK', merchantView(row));
  }

  @Patch(BACK_OFFICE_ROUTES.merchant)
  async update(@Param(PathIdsPipe) { merchant_id: merchantId }: PathIds, @Body(BodyPipe) body: UpdateMerchantDto, @CurrentStaff() by: StaffMember) {
    if (Object.keys(body).length === 0) {
      throw new ApiError(422, 'VALIDATION_FAILED', 'Name at least one of callback_url, ip_whitelist, status, rate_limit_per_second, low_balance_threshold');
    }
    const changed = await this.service.update(merchantId, body, by.staffId);
    if (!changed) throw notFound(merchantId);
    return successEnvelope('OK', merchantView(changed.row), changed.warnings);
  }

  /** The new secret is in this reply only, like a new merchant's. Callbacks are signed with it from now on. */
  @Post(BACK_OFFICE_ROUTES.appSecret)
  @HttpCode(200)
  async rotateAppSecret(@Param(PathIdsPipe) { merchant_id: merchantId }: PathIds, @Body(BodyPipe) body: RotateAppSecretDto, @CurrentStaff() by: StaffMember) {
    const { appSecret } = newMerchantCredentials();
    const row = await this.merchants.rotateAppSecret(merchantId, appSecret, body.overlap_seconds, by.staffId);
    if (!row) throw notFound(merchantId);
    return successEnvelope('OK', { ...merchantView(row), app_secret: appSecret } satisfies MerchantWithSecretView);
  }

  @Delete(BACK_OFFICE_ROUTES.previousAppSecret)
  async revokePreviousAppSecret(@Param(PathIdsPipe) { merchant_id: merchantId }: PathIds, @CurrentStaff() by: StaffMember) {
    const row = await this.merchants.revokePreviousAppSecret(merchantId, by.staffId);
    if (!row) throw notFound(merchantId);
    return successEnvelope('OK', merchantView(row));
  }
}

import { Body, Get, Param, Put } from '@nestjs/common';
import { ApiError, successEnvelope } from '../../infrastructure/http/api-error';
import { parseAmount } from '../../shared/money';
import { CurrentStaff } from '../auth/current-staff.decorator';
import { Roles } from '../auth/roles.decorator';
import type { StaffMember } from '../auth/staff-member';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { PathIds, PathIdsPipe } from '../http/identifier';
import { DEFAULT_PAGE_SIZE, ListPage, listQuery, page } from '../http/listing';
import { choice, identifier, text } from '../http/query-readers';
import { QueryString, QueryValues } from '../http/query-string';
import { BodyPipe } from '../http/back-office-body.pipe';
import { DEFAULT_ROUTE, PutPriceDto, PutProductDto, PutSkuDto } from './catalogue.dto';
import { CatalogueRepository } from './catalogue.repository';
import { PriceListView, priceListView, priceView, ProductView, productView, SkuView, skuView } from './catalogue.view';
import { BACK_OFFICE_ROUTES } from '../routes.public';
import { SafeToRepeat } from '../../infrastructure/http/database-wait.interceptor';

const PRODUCTS_QUERY = listQuery({ name: text(128) }, 1);
const SKUS_QUERY = listQuery({ product_id: identifier, on_shelf: choice(['true', 'false'] as const), name: text(128) }, 1);
const PRICES_QUERY = listQuery({}, 1);

/** PUT creates or replaces: the same request twice leaves the same catalogue. */
@BackOfficeController()
@Roles()
export class CatalogueController {
  constructor(private readonly catalogue: CatalogueRepository) {}

  @Get(BACK_OFFICE_ROUTES.products)
  async listProducts(@QueryString(PRODUCTS_QUERY) q: QueryValues<typeof PRODUCTS_QUERY>) {
    const limit = q.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.catalogue.listProducts({ name: q.name, after: q.cursor?.[0] }, limit);
    const { shown, next_cursor } = page(rows, limit, (r) => [r.product_id]);
    return successEnvelope('OK', { products: shown.map(productView), next_cursor } satisfies ListPage<'products', ProductView>);
  }

  @Get(BACK_OFFICE_ROUTES.skus)
  async listSkus(@QueryString(SKUS_QUERY) q: QueryValues<typeof SKUS_QUERY>) {
    const limit = q.limit ?? DEFAULT_PAGE_SIZE;
    const onShelf = q.on_shelf === undefined ? undefined : q.on_shelf === 'true';
    const rows = await this.catalogue.listSkus({ productId: q.product_id, onShelf, name: q.name, after: q.cursor?.[0] }, limit);
    const { shown, next_cursor } = page(rows, limit, (r) => [r.sku_id]);
    return successEnvelope('OK', { skus: shown.map(skuView), next_cursor } satisfies ListPage<'skus', SkuView>);
  }

  @Get(BACK_OFFICE_ROUTES.prices)
  async listPrices(@Param(PathIdsPipe) { merchant_id: merchantId }: PathIds, @QueryString(PRICES_QUERY) q: QueryValues<typeof PRICES_QUERY>) {
    const limit = q.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.catalogue.listPrices(merchantId, q.cursor?.[0], limit);
    if (!rows) throw new ApiError(404, 'MERCHANT_NOT_FOUND', `No merchant ${merchantId}`);
    const { shown, next_cursor } = page(rows, limit, (r) => [r.sku_id]);
    return successEnvelope('OK', { prices: shown.map(priceListView), next_cursor } satisfies ListPage<'prices', PriceListView>);
  }

  @SafeToRepeat()
  @Put(BACK_OFFICE_ROUTES.product)
  async putProduct(@Param(PathIdsPipe) { product_id: productId }: PathIds, @Body(BodyPipe) body: PutProductDto, @CurrentStaff() by: StaffMember) {
    return successEnvelope('OK', productView(await this.catalogue.putProduct(productId, body.name, by.staffId)));
  }

  @SafeToRepeat()
  @Put(BACK_OFFICE_ROUTES.sku)
  async putSku(@Param(PathIdsPipe) { sku_id: skuId }: PathIds, @Body(BodyPipe) body: PutSkuDto, @CurrentStaff() by: StaffMember) {
    const sku = {
      product_id: body.product_id,
      name: body.name,
      required_account_fields: body.required_account_fields,
      supports_account_check: body.supports_account_check,
      on_shelf: body.on_shelf,
      route: body.route === undefined ? DEFAULT_ROUTE : body.route,
    };
    return successEnvelope('OK', skuView(await this.catalogue.putSku(skuId, sku, by.staffId)));
  }

  @SafeToRepeat()
  @Put(BACK_OFFICE_ROUTES.price)
  async putPrice(@Param(PathIdsPipe) { merchant_id: merchantId, sku_id: skuId }: PathIds, @Body(BodyPipe) body: PutPriceDto, @CurrentStaff() by: StaffMember) {
    const price = parseAmount(body.price)!; // validated by PutPriceDto
    return successEnvelope('OK', priceView(await this.catalogue.putPrice(merchantId, skuId, price, by.staffId)));
  }
}

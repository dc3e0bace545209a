import { Body, Get, Param, Put, Query } from '@nestjs/common';
import { ApiError, successEnvelope } from '../../infrastructure/http/api-error';
import { parseAmount } from '../../shared/money';
import { CurrentStaff } from '../auth/current-staff.decorator';
import { Roles } from '../auth/roles.decorator';
import type { StaffMember } from '../auth/staff-member';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { PathIds, PathIdsPipe } from '../http/identifier';
import { choiceParameter, decodeCursor, identifierParameter, ListPage, page, pageSize, queryParameters, textParameter } from '../http/listing';
import { BodyPipe } from '../http/back-office-body.pipe';
import { DEFAULT_ROUTE, PutPriceDto, PutProductDto, PutSkuDto } from './catalogue.dto';
import { CatalogueRepository } from './catalogue.repository';
import { PriceListView, priceListView, priceView, ProductView, productView, SkuView, skuView } from './catalogue.view';
import { BACK_OFFICE_ROUTES } from '../routes.public';
import { SafeToRepeat } from '../../infrastructure/http/database-wait.interceptor';

/** PUT creates or replaces: the same request twice leaves the same catalogue. */
@BackOfficeController()
@Roles()
export class CatalogueController {
  constructor(private readonly catalogue: CatalogueRepository) {}

  @Get(BACK_OFFICE_ROUTES.products)
  async listProducts(@Query() query: Record<string, unknown>) {
    const q = queryParameters(query, ['name']);
    const limit = pageSize(q.limit);
    const rows = await this.catalogue.listProducts({ name: textParameter(q.name, 'name'), after: decodeCursor(q.cursor, 1)?.[0] }, limit);
    const { shown, next_cursor } = page(rows, limit, (r) => [r.product_id]);
    return successEnvelope('OK', { products: shown.map(productView), next_cursor } satisfies ListPage<'products', ProductView>);
  }

  @Get(BACK_OFFICE_ROUTES.skus)
  async listSkus(@Query() query: Record<string, unknown>) {
    const q = queryParameters(query, ['product_id', 'on_shelf', 'name']);
    const limit = pageSize(q.limit);
    const onShelf = choiceParameter(q.on_shelf, 'on_shelf', ['true', 'false'] as const);
    const rows = await this.catalogue.listSkus(
      {
        productId: identifierParameter(q.product_id, 'product_id'),
        onShelf: onShelf === undefined ? undefined : onShelf === 'true',
        name: textParameter(q.name, 'name'),
        after: decodeCursor(q.cursor, 1)?.[0],
      },
      limit,
    );
    const { shown, next_cursor } = page(rows, limit, (r) => [r.sku_id]);
    return successEnvelope('OK', { skus: shown.map(skuView), next_cursor } satisfies ListPage<'skus', SkuView>);
  }

  @Get(BACK_OFFICE_ROUTES.prices)
  async listPrices(@Param(PathIdsPipe) { merchant_id: merchantId }: PathIds, @Query() query: Record<string, unknown>) {
    const q = queryParameters(query, []);
    const limit = pageSize(q.limit);
    const rows = await this.catalogue.listPrices(merchantId, decodeCursor(q.cursor, 1)?.[0], limit);
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

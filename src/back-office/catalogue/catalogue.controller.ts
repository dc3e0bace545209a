import { Body, Param, Put } from '@nestjs/common';
import { successEnvelope } from '../../infrastructure/http/api-error';
import { parseAmount } from '../../shared/money';
import { CurrentStaff } from '../auth/current-staff.decorator';
import { Roles } from '../auth/roles.decorator';
import type { StaffMember } from '../auth/staff-member';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { PathIds, PathIdsPipe } from '../http/identifier';
import { BodyPipe } from '../http/validate-body';
import { DEFAULT_ROUTE, PutPriceDto, PutProductDto, PutSkuDto } from './catalogue.dto';
import { CatalogueRepository } from './catalogue.repository';
import { priceView, productView, skuView } from './catalogue.view';

/** PUT creates or replaces: the same request twice leaves the same catalogue. */
@BackOfficeController()
@Roles()
export class CatalogueController {
  constructor(private readonly catalogue: CatalogueRepository) {}

  @Put('products/:product_id')
  async putProduct(@Param(PathIdsPipe) { product_id: productId }: PathIds, @Body(BodyPipe) body: PutProductDto, @CurrentStaff() by: StaffMember) {
    return successEnvelope('OK', productView(await this.catalogue.putProduct(productId, body.name, by.staffId)));
  }

  @Put('skus/:sku_id')
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

  @Put('merchants/:merchant_id/prices/:sku_id')
  async putPrice(
    @Param(PathIdsPipe) { merchant_id: merchantId, sku_id: skuId }: PathIds,
    @Body(BodyPipe) body: PutPriceDto,
    @CurrentStaff() by: StaffMember,
  ) {
    const price = parseAmount(body.price)!; // validated by PutPriceDto
    return successEnvelope('OK', priceView(await this.catalogue.putPrice(merchantId, skuId, price, by.staffId)));
  }
}

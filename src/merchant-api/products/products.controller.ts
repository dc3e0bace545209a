import { Controller, HttpCode, Post } from '@nestjs/common';
import { successEnvelope } from '../../infrastructure/http/api-error';
import { formatAmount } from '../../shared/money';
import { CatalogueReader } from './catalogue.reader';
import { EmptyDto, Merchant, MerchantBody, MerchantRequest } from '../gateway/merchant-request';
import { V2_ROUTES } from '../routes.public';
import { DatabaseWait } from '../../infrastructure/http/database-wait.interceptor';

@Controller()
export class ProductsController {
  constructor(
    private readonly catalogue: CatalogueReader,
    private readonly databaseWait: DatabaseWait,
  ) {}

  /** The body must be {}: the parameter is there for its check. */
  @Post(V2_ROUTES.products)
  @HttpCode(200)
  async products(@Merchant() request: MerchantRequest, @MerchantBody() _body: EmptyDto) {
    const products = await this.databaseWait.repeatAfterOutage(() => this.catalogue.products(request.merchant.merchantId));
    return successEnvelope('OK', {
      products: products.map((p) => ({
        product_id: p.product_id,
        name: p.name,
        skus: p.skus.map((s) => ({
          sku_id: s.sku_id,
          name: s.name,
          price: formatAmount(s.price),
          currency: request.merchant.currency,
          required_account_fields: s.required_account_fields,
          supports_account_check: s.supports_account_check,
        })),
      })),
    });
  }
}

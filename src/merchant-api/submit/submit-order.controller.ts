import { Controller, Post, Res } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { Response } from 'express';
import { sameTarget } from '../../ledger/order/order.decider';
import { ApiError, successEnvelope } from '../../infrastructure/http/api-error';
import { CommandRefusedError } from '../../shared/command-refused';
import { CatalogueReader, PricedSku } from '../products/catalogue.reader';
import { Merchant, MERCHANT_BODY, MerchantRequest } from '../gateway/merchant-request';
import { V2_ROUTES } from '../routes.public';
import { presentOrder } from '../orders/order.presenter';
import { factsOf, OrderReader } from '../orders/order.reader';
import { validateBody } from '../../infrastructure/http/validate-body';
import { SubmitOrder } from './submit-order.command';
import { SubmitOrderDto } from './submit-order.dto';

@Controller()
export class SubmitOrderController {
  constructor(
    private readonly commands: CommandBus,
    private readonly catalogue: CatalogueReader,
    private readonly orders: OrderReader,
  ) {}

  @Post(V2_ROUTES.submit)
  async submit(@Merchant() request: MerchantRequest, @Res({ passthrough: true }) response: Response) {
    const dto = await validateBody(SubmitOrderDto, request.body, MERCHANT_BODY);
    const { merchantId, currency } = request.merchant;
    const sku = await this.catalogue.sku(merchantId, dto.sku_id);
    const problem = skuProblem(sku, dto);
    if (problem) {
      // A replay of an order placed before the SKU changed still gets its order back.
      const existing = await this.existingOrder(merchantId, dto);
      if (existing) {
        response.status(200);
        return successEnvelope('DUPLICATE', existing);
      }
      throw problem;
    }
    const result = await this.commands.execute(
      new SubmitOrder({
        merchantId,
        outTradeNo: dto.out_trade_no,
        skuId: dto.sku_id,
        accountId: dto.account_id,
        accountFields: dto.account_fields,
        amount: sku!.price!,
        currency,
      }),
    );
    // Reported like every other command's refusal: the exception filter maps the code to its status.
    if (result.outcome === 'refused') throw new CommandRefusedError(result.code, result.message);
    const view = presentOrder(factsOf(result.order)!);
    response.status(result.outcome === 'accepted' ? 202 : 200);
    return successEnvelope(result.outcome === 'accepted' ? 'ACCEPTED' : 'DUPLICATE', view);
  }

  private async existingOrder(merchantId: string, dto: SubmitOrderDto) {
    const orderNo = this.orders.orderNoFor(merchantId, { outTradeNo: dto.out_trade_no })!;
    const facts = await this.orders.find(merchantId, orderNo);
    const target = { skuId: dto.sku_id, accountId: dto.account_id, accountFields: dto.account_fields };
    return facts && sameTarget(facts, target) ? presentOrder(facts) : undefined;
  }
}

/** The contract's checks on the SKU, in its order: account fields, route, then shelf and price. */
function skuProblem(sku: PricedSku | undefined, dto: SubmitOrderDto): ApiError | undefined {
  if (!sku) return new ApiError(422, 'SKU_NOT_FOUND', `No SKU ${dto.sku_id}`, 'sku_id');
  const missing = sku.requiredAccountFields.find((f) => !Object.prototype.hasOwnProperty.call(dto.account_fields, f));
  if (missing) return new ApiError(400, 'MISSING_REQUIRED_FIELD', `account_fields.${missing} is required for this SKU`, `account_fields.${missing}`);
  const unknown = Object.keys(dto.account_fields).find((f) => !sku.requiredAccountFields.includes(f));
  if (unknown !== undefined) {
    return new ApiError(400, 'INVALID_ACCOUNT_FIELD', `account_fields.${unknown} is not defined for this SKU`, `account_fields.${unknown}`);
  }
  if (sku.route === null) return new ApiError(400, 'ROUTE_UNAVAILABLE', 'No upstream route can fulfil this SKU now', 'sku_id');
  if (!sku.onShelf || sku.price === undefined) return new ApiError(422, 'SKU_OFF_SHELF', 'The SKU is not on sale to this merchant', 'sku_id');
  return undefined;
}

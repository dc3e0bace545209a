import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiError } from '../../infrastructure/http/api-error';
import { sameTarget } from '../../ledger/order/order.decider';
import { CommandRefusedError } from '../../shared/command-refused';
import { OrderView, presentOrder } from '../orders/order.presenter';
import { factsOf, OrderReader } from '../orders/order.reader';
import { CatalogueReader, PricedSku } from '../products/catalogue.reader';
import { SubmitOrder } from '../../ledger/commands/submit-order/submit-order.command';
import { SubmitOrderDto } from './submit-order.dto';

export interface Submission {
  outcome: 'accepted' | 'duplicate';
  order: OrderView;
}

/**
 * A merchant's submit, after its body is checked: the SKU's rules, then the
 * ledger's SubmitOrder. Every refusal leaves as an error: the SKU's as an
 * ApiError, the ledger's as a CommandRefusedError, like every other command's.
 */
@Injectable()
export class SubmitOrderService {
  constructor(
    private readonly commands: CommandBus,
    private readonly catalogue: CatalogueReader,
    private readonly orders: OrderReader,
  ) {}

  /** `catalogueRevision`: the catalogue's revision when the request was admitted (MerchantRequest). */
  async submit(merchant: { merchantId: string; currency: string }, dto: SubmitOrderDto, catalogueRevision: string): Promise<Submission> {
    const { merchantId, currency } = merchant;
    const sku = await this.catalogue.sku(merchantId, dto.sku_id, catalogueRevision);
    const problem = skuProblem(sku, dto);
    if (problem) {
      // A replay of an order placed before the SKU changed still gets its order back.
      const existing = await this.existingOrder(merchantId, dto);
      if (existing) return { outcome: 'duplicate', order: existing };
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
    if (result.outcome === 'refused') throw new CommandRefusedError(result.code, result.message);
    return { outcome: result.outcome, order: presentOrder(factsOf(result.order)!) };
  }

  private async existingOrder(merchantId: string, dto: SubmitOrderDto): Promise<OrderView | undefined> {
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

import { Controller, HttpCode, Post } from '@nestjs/common';
import { ApiError, successEnvelope } from '../../infrastructure/http/api-error';
import { Merchant, MERCHANT_BODY, MerchantRequest } from '../gateway/merchant-request';
import { V2_ROUTES } from '../routes.public';
import { presentOrder } from '../orders/order.presenter';
import { QueryOrderDto } from './query-order.dto';
import { OrderReader } from '../orders/order.reader';
import { validateBody } from '../../infrastructure/http/dto-body-validator';
import { DatabaseWait } from '../../infrastructure/http/database-wait.interceptor';

const NOT_FOUND = () => new ApiError(404, 'ORDER_NOT_FOUND', 'No such order');

@Controller()
export class QueryOrderController {
  constructor(
    private readonly orders: OrderReader,
    private readonly databaseWait: DatabaseWait,
  ) {}

  /** Reads the service's own records only: polling never reaches the upstream. */
  @Post(V2_ROUTES.query)
  @HttpCode(200)
  async query(@Merchant() request: MerchantRequest) {
    // A missing identifier (400) is reported before a wrong or unknown field (422), as for submit.
    if ((request.body.order_no ?? null) === null && (request.body.out_trade_no ?? null) === null) {
      throw new ApiError(400, 'MISSING_REQUIRED_FIELD', 'order_no or out_trade_no is required', 'order_no');
    }
    const dto = await validateBody(QueryOrderDto, request.body, MERCHANT_BODY);
    const { merchantId } = request.merchant;
    // Both given must name the same order; another merchant's order is simply not found.
    const orderNo = this.orders.orderNoFor(merchantId, { orderNo: dto.order_no, outTradeNo: dto.out_trade_no });
    const order = orderNo === undefined ? undefined : await this.databaseWait.repeatAfterOutage(() => this.orders.find(merchantId, orderNo));
    if (!order) throw NOT_FOUND();
    return successEnvelope('OK', presentOrder(order));
  }
}

import { Controller, HttpCode, Post } from '@nestjs/common';
import { ApiError, successEnvelope } from '../../infrastructure/http/api-error';
import { Merchant, MerchantBody, MerchantRequest } from '../gateway/merchant-request';
import { V2_ROUTES } from '../routes.public';
import { presentOrder } from '../orders/order.presenter';
import { QueryOrderDto } from './query-order.dto';
import { OrderReader } from '../orders/order.reader';
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
  async query(@Merchant() request: MerchantRequest, @MerchantBody() dto: QueryOrderDto) {
    const { merchantId } = request.merchant;
    // Both given must name the same order; another merchant's order is simply not found.
    const orderNo = this.orders.orderNoFor(merchantId, { orderNo: dto.order_no, outTradeNo: dto.out_trade_no });
    const order = orderNo === undefined ? undefined : await this.databaseWait.repeatAfterOutage(() => this.orders.find(merchantId, orderNo));
    if (!order) throw NOT_FOUND();
    return successEnvelope('OK', presentOrder(order));
  }
}

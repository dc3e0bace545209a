import { Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { UPSTREAM, UpstreamProvider } from '../../fulfilment';
import { successEnvelope } from '../../infrastructure/http/api-error';
import { Roles } from '../auth/roles.decorator';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { PathIds, PathIdsPipe } from '../http/identifier';
import { integer, offset } from '../http/query-readers';
import { QueryString, QueryValues } from '../http/query-string';
import { eventDataView } from '../orders/order.view';
import { DisplayNames } from '../display-names/display-names';
import { OrderDetailReader } from './order-detail.reader';
import { ReconciliationQueueReader } from './reconciliation-queue.reader';
import { QueuePageView, queuedOrderView, RequeryView } from './reconciliation.view';
import { BACK_OFFICE_ROUTES } from '../routes.public';

const QUEUE_QUERY = { limit: integer(0, 500), offset };

/**
 * Orders whose upstream result is unknown wait here, money frozen, for a
 * person to decide (the decision itself: resolve-order.controller.ts).
 */
@BackOfficeController()
@Roles('reconciler')
export class ReconciliationController {
  constructor(
    private readonly queueReader: ReconciliationQueueReader,
    private readonly orders: OrderDetailReader,
    private readonly names: DisplayNames,
    @Inject(UPSTREAM) private readonly upstream: UpstreamProvider,
  ) {}

  /** The queue, oldest first. */
  @Get(BACK_OFFICE_ROUTES.reconciliationQueue)
  async queue(@QueryString(QUEUE_QUERY) q: QueryValues<typeof QUEUE_QUERY>) {
    const { rows, total } = await this.queueReader.page(q.limit ?? 100, q.offset ?? 0);
    const names = await this.names.of({ merchants: rows.map((r) => r.merchant_id) });
    return successEnvelope('OK', { total, orders: rows.map((r) => queuedOrderView(r, names)) } satisfies QueuePageView);
  }

  /** One order as staff see it: its state and its whole history from the event store. */
  @Get(BACK_OFFICE_ROUTES.order)
  @Roles('reconciler', 'auditor')
  async order(@Param(PathIdsPipe) { order_no: orderNo }: PathIds) {
    return successEnvelope('OK', await this.orders.detail(orderNo));
  }

  /** Asks the upstream what became of the order. Informs a person; settles nothing by itself. */
  @Post(BACK_OFFICE_ROUTES.requeryOrder)
  @HttpCode(200)
  async requery(@Param(PathIdsPipe) { order_no: orderNo }: PathIds) {
    const detail = await this.orders.detail(orderNo);
    const { kind, ...said } = await this.upstream.status(orderNo);
    return successEnvelope('OK', {
      order_no: orderNo,
      stage: detail.stage,
      upstream: { status: kind, ...eventDataView(said as Record<string, unknown>) },
    } satisfies RequeryView);
  }
}

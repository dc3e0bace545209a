import { orderOutcomeHandler } from '../../ledger/commands/order-outcome.handler';
import { ResolveOrder } from './resolve-order.command';

export const ResolveOrderHandler = orderOutcomeHandler(ResolveOrder);

import { orderOutcomeHandler } from '../../ledger/commands/order-outcome.handler';
import { ConfirmDelivery } from './confirm-delivery.command';
import { MarkResultUnknown } from './mark-result-unknown.command';
import { RecordDeliveryFailure } from './record-delivery-failure.command';
import { RecordUpstreamAttempt } from './record-upstream-attempt.command';

/** The handlers of the commands the fulfilment worker sends, one per command class. */
export const OUTCOME_HANDLERS = [RecordUpstreamAttempt, ConfirmDelivery, RecordDeliveryFailure, MarkResultUnknown].map(orderOutcomeHandler);

import { BACK_OFFICE_ROUTES, documentedPath } from '../../back-office/routes.public';
import { identifier, money, nullable, open, string, timestamp } from '../schema-kit';
import { listOf, listParameters, merchantName, ok, operation, PathItems, refusals, staffName } from './route-kit';

/** The search of orders, refused submits included. */
export function orderSearchPaths(): PathItems {
  return {
    [documentedPath(BACK_OFFICE_ROUTES.orders)]: {
      get: operation({
        summary: 'Search orders, newest first',
        description: 'Submits the merchant API refused are listed too, with stage "refused", status null and their refusal_code.',
        roles: ['reconciler', 'auditor'],
        parameters: listParameters([
          ['merchant_id', 'Exactly', identifier],
          ['order_no', 'Exactly', string()],
          ['out_trade_no', 'Exactly', string()],
          ['account_id', 'Exactly', string()],
          ['status', 'processing, success or failed', { enum: ['processing', 'success', 'failed'] }],
          ['stage', 'The internal stage', string()],
          ['created_from', 'Created at or after (ISO 8601 with an offset)', string()],
          ['created_to', 'Created before', string()],
          ['completed_from', 'Completed at or after', string()],
          ['completed_to', 'Completed before', string()],
        ]),
        responses: {
          200: ok(
            'A page of orders',
            listOf(
              'orders',
              open({
                order_no: string(),
                merchant_id: string(),
                merchant_name: merchantName,
                out_trade_no: string(),
                status: nullable({ enum: ['processing', 'success', 'failed'] }),
                stage: string(),
                sku_id: string(),
                account_id: string(),
                amount: money,
                currency: string(),
                refusal_code: nullable(string()),
                fail_code: nullable(string()),
                resolved_by: nullable(string()),
                resolved_by_name: staffName('resolved_by'),
                created_at: timestamp,
                completed_at: nullable(timestamp),
              }),
            ),
          ),
          ...refusals({}),
        },
      }),
    },
  };
}

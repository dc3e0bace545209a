import { IsString, Length } from 'class-validator';
import { Optional, Rule } from '../../../infrastructure/http/field-rules';
import { IDENTIFIER, IDENTIFIER_RULE, isIdentifier } from '../../../shared/limits';
import type { ChosenOrder } from './bulk-resolutions';

/** The most orders one apply may name. */
export const MAX_CHOSEN_ORDERS = 10_000;

/** 1 to MAX_CHOSEN_ORDERS entries `{"order_no", "outcome"?}`, each order once. */
export const IsChosenOrders = () =>
  Rule(
    'isChosenOrders',
    {
      schema: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_CHOSEN_ORDERS,
        items: {
          type: 'object',
          properties: { order_no: { type: 'string', pattern: IDENTIFIER.source }, outcome: { enum: ['success', 'failed'] } },
          required: ['order_no'],
          additionalProperties: false,
        },
        examples: [[{ order_no: 'T01JD3ZQ4N6W8Y0A2C4E6G8J0K', outcome: 'failed' }]],
      },
      beyond: 'Each order_no at most once',
    },
    (value) => {
      if (!Array.isArray(value) || value.length < 1 || value.length > MAX_CHOSEN_ORDERS) return `must be an array of 1-${MAX_CHOSEN_ORDERS} orders`;
      const seen = new Set<string>();
      for (const [index, entry] of value.entries()) {
        if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return `entry ${index} must be an object {"order_no", "outcome"?}`;
        const { order_no: orderNo, outcome, ...rest } = entry as Record<string, unknown>;
        const unknown = Object.keys(rest)[0];
        if (unknown !== undefined) return `entry ${index} has ${JSON.stringify(unknown)}, which is not a field of an order: order_no, outcome`;
        if (!isIdentifier(orderNo)) return `entry ${index}: order_no must be ${IDENTIFIER_RULE}`;
        if (outcome !== undefined && outcome !== 'success' && outcome !== 'failed') return `entry ${index}: outcome must be "success" or "failed"`;
        if (seen.has(orderNo)) return `names ${orderNo} more than once`;
        seen.add(orderNo);
      }
      return undefined;
    },
  );

/** A bulk apply: the note every resolution carries, and optionally the orders (all the definitive proposals without). */
export class BulkApplyDto {
  /** Why: kept in each resolution event for auditors. */
  @IsString()
  @Length(1, 1000, { message: 'note must be 1-1000 characters' })
  note!: string;

  @Optional()
  @IsChosenOrders()
  orders?: ChosenOrder[];
}

import { Doc, IsIdentifier, Optional, Rule } from '../../../infrastructure/http/field-rules';
import { ISO_INSTANT, parseInstant } from '../../../shared/clock';
import { IDENTIFIER, IDENTIFIER_RULE, isIdentifier } from '../../../shared/limits';

/** The most order_nos one job may list. */
export const MAX_LISTED_ORDERS = 10_000;

export const IsInstant = () =>
  Rule(
    'isInstant',
    {
      schema: {
        type: 'string',
        pattern: ISO_INSTANT.source,
        description: 'ISO 8601 with an offset',
        examples: ['2026-11-22T10:00:00Z', '2026-11-22T10:00:00.123456+05:30'],
      },
      beyond: 'A date and time that exist',
    },
    (value) =>
      typeof value === 'string' && parseInstant(value)
        ? undefined
        : 'must be an ISO 8601 time with an offset, e.g. 2026-11-22T10:00:00Z or 2026-11-22T10:00:00+00:00',
  );

/** 1 to MAX_LISTED_ORDERS order numbers, each once. */
export const IsOrderNoList = () =>
  Rule(
    'isOrderNoList',
    {
      schema: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_LISTED_ORDERS,
        uniqueItems: true,
        items: { type: 'string', pattern: IDENTIFIER.source },
        examples: [['T01JD3ZQ4N6W8Y0A2C4E6G8J0K']],
      },
    },
    (value) => {
      if (!Array.isArray(value) || value.length < 1 || value.length > MAX_LISTED_ORDERS) return `must be an array of 1-${MAX_LISTED_ORDERS} order numbers`;
      const seen = new Set<string>();
      for (const [index, orderNo] of value.entries()) {
        if (!isIdentifier(orderNo)) return `entry ${index} must be ${IDENTIFIER_RULE}`;
        if (seen.has(orderNo)) return `names ${orderNo} more than once`;
        seen.add(orderNo);
      }
      return undefined;
    },
  );

/** Which orders of the reconciliation queue to re-query: at least one filter; they combine with "and". */
export class StartRequeryDto {
  @Doc({ examples: ['mch_0123456789abcdef'] })
  @Optional()
  @IsIdentifier()
  merchant_id?: string;

  /** Created at or after this instant. */
  @Optional()
  @IsInstant()
  created_from?: string;

  /** Created before this instant. */
  @Optional()
  @IsInstant()
  created_to?: string;

  @Optional()
  @IsOrderNoList()
  order_nos?: string[];
}

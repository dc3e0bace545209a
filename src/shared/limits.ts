/**
 * Identifiers and size limits that both APIs, the CLI and the OpenAPI
 * documents state: written once, so that a limit cannot say one thing at the
 * edge and another in the docs.
 */

/**
 * Ids chosen by staff (products, SKUs), by merchants (`out_trade_no`) and by
 * the service (merchants, staff) share one alphabet.
 */
export const IDENTIFIER = /^[A-Za-z0-9._:-]{1,64}$/;

export const IDENTIFIER_RULE = '1-64 characters of A-Z a-z 0-9 - _ . :';

export const isIdentifier = (value: unknown): value is string => typeof value === 'string' && IDENTIFIER.test(value);

/** A request body on either API. */
export const MAX_BODY_BYTES = 64 * 1024;

/** The JSON body of a back-office bulk action, which may list 10,000 orders by number. */
export const MAX_BULK_BODY_BYTES = 1024 * 1024;

/** The names of the account fields a SKU requires (back office: `required_account_fields`). */
export const ACCOUNT_FIELD_NAME = /^[a-z][a-z0-9_]{0,31}$/;

/** How many account fields a SKU may require. */
export const MAX_REQUIRED_ACCOUNT_FIELDS = 20;

/**
 * How many values a submit's `account_fields` may hold. Larger than what a SKU
 * may require, so that a submit with too many fields for its SKU is told which
 * field the SKU does not define (400 INVALID_ACCOUNT_FIELD), as documented,
 * rather than only that the object is too large.
 */
export const MAX_ACCOUNT_FIELD_VALUES = 32;

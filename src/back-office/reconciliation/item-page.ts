import { integer, offset } from '../http/query-readers';

/** Items shown per page of a job's orders or a report's items by default, and at most. */
export const ITEM_PAGE_SIZE = 100;
export const MAX_ITEM_PAGE_SIZE = 1_000;

/**
 * The query of a page of a job's or a report's items, beside its one filter:
 * `limit` and `offset`. The items of a job or a report never change order
 * (only their applied state changes), so an offset page is stable.
 */
export const ITEM_PAGE_QUERY = { limit: integer(1, MAX_ITEM_PAGE_SIZE), offset };

import { ApiError } from '../../infrastructure/http/api-error';
import { choiceParameter, integerParameter } from '../http/listing';

/** Items shown per page of a job's orders or a report's items by default, and at most. */
export const ITEM_PAGE_SIZE = 100;
export const MAX_ITEM_PAGE_SIZE = 1_000;

/**
 * The query of a page of a job's or a report's items: one filter, `limit`
 * and `offset`. The items of a job or a report never change order (only
 * their applied state changes), so an offset page is stable. Anything else
 * in the query is refused, as on every list of the back office.
 */
export function itemPage<T extends string>(
  query: Record<string, unknown>,
  filter: string,
  choices: readonly T[],
): { chosen: T | undefined; limit: number; offset: number } {
  const allowed = [filter, 'limit', 'offset'];
  for (const [name, value] of Object.entries(query)) {
    if (!allowed.includes(name)) throw new ApiError(422, 'VALIDATION_FAILED', `Unknown query parameter ${name}; this route takes ${allowed.join(', ')}`, name);
    if (typeof value !== 'string') throw new ApiError(422, 'VALIDATION_FAILED', `${name} may be given once`, name);
  }
  const text = (name: string) => query[name] as string | undefined;
  return {
    chosen: choiceParameter(text(filter), filter, choices),
    limit: integerParameter(text('limit'), 'limit', 1, MAX_ITEM_PAGE_SIZE) ?? ITEM_PAGE_SIZE,
    offset: integerParameter(text('offset'), 'offset', 0, 1_000_000_000) ?? 0,
  };
}

/**
 * Swagger UI filters by tag name only; this plugin replaces its filter so
 * that the box finds operations: every word typed must appear in the
 * operation's method, path, summary, description, operation id or tag, in
 * any case. Swagger UI hands the operations over as Immutable.js maps,
 * grouped by tag.
 */

interface ImmutableMap {
  get(key: string): unknown;
  set(key: string, value: unknown): ImmutableMap;
  map(mapper: (value: ImmutableMap, key: string) => ImmutableMap): ImmutableMap;
  filter(predicate: (value: ImmutableMap, key: string) => boolean): ImmutableMap;
  readonly size: number;
}

function matches(operation: ImmutableMap, tag: string, words: string[]): boolean {
  const details = operation.get('operation') as ImmutableMap | undefined;
  const text = [operation.get('method'), operation.get('path'), tag, details?.get('summary'), details?.get('description'), details?.get('operationId')]
    .filter((part) => typeof part === 'string')
    .join(' ')
    .toLowerCase();
  return words.every((word) => text.includes(word));
}

export function filterOperations(taggedOperations: ImmutableMap, phrase: string): ImmutableMap {
  const words = phrase.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return taggedOperations;
  return taggedOperations
    .map((group, tag) =>
      group.set(
        'operations',
        (group.get('operations') as ImmutableMap).filter((operation) => matches(operation, tag, words)),
      ),
    )
    .filter((group) => (group.get('operations') as ImmutableMap).size > 0);
}

export const OperationFilterPlugin = () => ({ fn: { opsFilter: filterOperations } });

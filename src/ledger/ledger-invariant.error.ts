/** An invariant broke: never a business outcome, always loud. */
export class LedgerInvariantError extends Error {
  override name = 'LedgerInvariantError';
}

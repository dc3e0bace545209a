import type { Response } from 'express';
import { successEnvelope } from '../../infrastructure/http/api-error';
import type { ApprovalView } from './approval.view';

/**
 * The reply of a route whose movement the four-eyes rule may hold: 202
 * APPROVAL_REQUIRED with the request while it waits for a second person,
 * otherwise the route's own success (its status as the route sets it).
 */
export async function approvalOr<T>(response: Response, approval: ApprovalView | undefined, done: () => T | Promise<T>) {
  if (!approval) return successEnvelope('OK', await done());
  response.status(202);
  return successEnvelope('APPROVAL_REQUIRED', approval);
}

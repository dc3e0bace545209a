import type { UpstreamStatus } from '../../../fulfilment';

/** What the upstream said when asked again about an order. */
export type RequeryAnswer = UpstreamStatus['kind'];
export const REQUERY_ANSWERS: readonly RequeryAnswer[] = ['delivered', 'refused', 'pending', 'not_received', 'unknown'];

/**
 * What an answer argues for: `success` and `failed` are definitive proposals a
 * bulk apply may carry out; `leave` means nothing can be decided yet (the
 * upstream is still working, or gave no clear answer); `decide` means the
 * upstream never received the order, which argues for "failed" but is a
 * person's call (the request may still be in flight to it).
 */
export type RequeryProposal = 'success' | 'failed' | 'leave' | 'decide';
export const REQUERY_PROPOSALS: readonly RequeryProposal[] = ['success', 'failed', 'leave', 'decide'];

const PROPOSAL: Record<RequeryAnswer, RequeryProposal> = {
  delivered: 'success',
  refused: 'failed',
  pending: 'leave',
  not_received: 'decide',
  unknown: 'leave',
};

export const proposalFor = (answer: RequeryAnswer): RequeryProposal => PROPOSAL[answer];

/** A proposal a bulk apply carries out without being told an outcome. */
export const isDefinitive = (proposal: RequeryProposal | null): proposal is 'success' | 'failed' => proposal === 'success' || proposal === 'failed';

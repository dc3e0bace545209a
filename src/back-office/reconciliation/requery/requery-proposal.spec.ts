import { isDefinitive, proposalFor, REQUERY_ANSWERS, RequeryAnswer, RequeryProposal } from './requery-proposal';

describe('proposalFor: what a re-query answer argues for', () => {
  it.each<[RequeryAnswer, RequeryProposal, boolean]>([
    ['delivered', 'success', true],
    ['refused', 'failed', true],
    ['pending', 'leave', false],
    ['not_received', 'decide', false],
    ['unknown', 'leave', false],
  ])('%s: %s (applied without an outcome: %s)', (answer, proposal, definitive) => {
    expect(proposalFor(answer)).toBe(proposal);
    expect(isDefinitive(proposalFor(answer))).toBe(definitive);
  });

  it('has a proposal for every answer', () => {
    expect(REQUERY_ANSWERS.map(proposalFor).every((p) => p !== undefined)).toBe(true);
    expect(isDefinitive(null)).toBe(false);
  });
});

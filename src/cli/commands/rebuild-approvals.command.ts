import { rebuildApprovalRows } from '../../back-office';
import { noMorePositionals } from '../cli-arguments';
import { CliCommand, EXIT } from '../cli-command';

export const rebuildApprovalsCommand: CliCommand = {
  name: 'rebuild-approvals',
  synopsis: 'rebuild-approvals',
  description:
    "Writes the approvals inbox's rows (the table GET /admin/v1/approvals lists) again from the approval streams in the log:\n" +
    'one pass over the log, then each approval stream. Safe alongside a running service: a row is never taken back to an older state.',
  options: [],
  async run(args, io, context) {
    noMorePositionals(args, 0);
    const { pool, store } = await context();
    io.stdout(`${JSON.stringify({ approvals: await rebuildApprovalRows(pool, store) })}\n`);
    return EXIT.OK;
  },
};

import { BACK_OFFICE_ROUTES, documentedPath } from '../../back-office/routes.public';
import { closed, nullable, ref, Schema, string, timestamp } from '../schema-kit';
import { listOf, listParameters, ok, operation, PathItems, pathId, refusals, staffName } from './route-kit';

export const staffMember: Schema = closed(
  {
    staff_id: string({ pattern: '^stf_[0-9a-f]{16}$' }),
    name: string(),
    role: { enum: ['admin', 'reconciler', 'auditor'] },
    status: { enum: ['active', 'disabled'] },
    created_at: timestamp,
    created_by: string(),
    created_by_name: staffName('created_by'),
    disabled_at: nullable(timestamp),
    disabled_by: nullable(string()),
    disabled_by_name: staffName('disabled_by'),
    token_rotated_at: nullable(timestamp),
    token: string({ description: 'Only in the reply to a token rotation' }),
  },
  ['token'],
);

/** Staff members and their tokens. */
export function staffPaths(): PathItems {
  return {
    [documentedPath(BACK_OFFICE_ROUTES.staff)]: {
      get: operation({
        summary: 'List staff members, newest first (never a token)',
        roles: ['admin'],
        parameters: listParameters([
          ['role', 'admin, reconciler or auditor', { enum: ['admin', 'reconciler', 'auditor'] }],
          ['status', 'active or disabled', { enum: ['active', 'disabled'] }],
        ]),
        responses: { 200: ok('A page of staff members', listOf('staff', ref('StaffMember'))), ...refusals({}) },
      }),
      post: operation({
        summary: 'Create a staff member',
        description: 'The token is shown only in this reply.',
        roles: ['admin'],
        responses: {
          201: ok(
            'The staff member and its token',
            closed({ staff_id: string({ pattern: '^stf_[0-9a-f]{16}$' }), name: string(), role: string(), token: string() }),
          ),
          ...refusals({}, { body: true }),
        },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.staffToken)]: {
      post: operation({
        summary: 'Give a staff member a new token',
        description: 'The new token is in this reply only; the old one stops working from the next request.',
        roles: ['admin'],
        parameters: [pathId('staff_id', 'The staff member, `stf_` and 16 hex characters')],
        responses: {
          200: ok('The member with its new token', ref('StaffMember')),
          ...refusals({
            404: { codes: ['STAFF_NOT_FOUND'], description: 'no such staff member' },
            409: { codes: ['STAFF_DISABLED'], description: 'The member is disabled' },
          }),
        },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.staffDisable)]: {
      post: operation({
        summary: 'Disable a staff member',
        description: 'The token stops working from the next request; disabling twice changes nothing more.',
        roles: ['admin'],
        parameters: [pathId('staff_id', 'The staff member, `stf_` and 16 hex characters')],
        responses: {
          200: ok('The member, disabled', ref('StaffMember')),
          ...refusals({
            404: { codes: ['STAFF_NOT_FOUND'], description: 'no such staff member' },
            409: { codes: ['CANNOT_DISABLE_SELF'], description: 'Nobody can disable themselves' },
          }),
        },
      }),
    },
  };
}

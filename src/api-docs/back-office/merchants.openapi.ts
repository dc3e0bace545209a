import { BACK_OFFICE_ROUTES, documentedPath } from '../../back-office/routes.public';
import { array, closed, integer, money, nullable, ref, Schema, string, timestamp } from '../schema-kit';
import { approvalRequired, listOf, listParameters, merchantId, ok, operation, PathItems, refusals, staffName, wallet } from './route-kit';

export const merchant: Schema = closed(
  {
    merchant_id: string({ pattern: '^mch_[0-9a-f]{16}$' }),
    name: string(),
    currency: string({ pattern: '^[A-Z]{3}$' }),
    api_key: string({ pattern: '^ak_[0-9a-f]{32}$' }),
    callback_url: nullable(string()),
    ip_whitelist: array(string()),
    status: { enum: ['active', 'suspended'] },
    rate_limit_per_second: integer(),
    low_balance_threshold: nullable(money),
    previous_secret_valid_until: nullable(timestamp),
    created_at: timestamp,
    created_by: string(),
    created_by_name: staffName('created_by'),
    updated_at: timestamp,
    updated_by: string(),
    updated_by_name: staffName('updated_by'),
    app_secret: string({ pattern: '^[0-9a-f]{64}$', description: 'Only in the replies to creation and rotation' }),
  },
  ['app_secret'],
);

/** Merchants, their app secrets and deposits to their wallets. */
export function merchantPaths(): PathItems {
  return {
    [documentedPath(BACK_OFFICE_ROUTES.merchants)]: {
      get: operation({
        summary: 'List merchants, newest first',
        roles: ['admin', 'reconciler', 'auditor'],
        parameters: listParameters([
          ['name', 'A part of the name, any case', string()],
          ['status', 'active or suspended', { enum: ['active', 'suspended'] }],
        ]),
        responses: { 200: ok('A page of merchants', listOf('merchants', ref('Merchant'))), ...refusals({}) },
      }),
      post: operation({
        summary: 'Create a merchant and its wallet',
        description: 'The app secret is shown only in this reply.',
        roles: ['admin'],
        responses: { 201: ok('The merchant, with its app secret', ref('Merchant')), ...refusals({}, { body: true }) },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.merchant)]: {
      get: operation({
        summary: 'Read a merchant',
        roles: ['reconciler', 'auditor'],
        parameters: [merchantId],
        responses: { 200: ok('The merchant', ref('Merchant')), ...refusals({ 404: { codes: ['MERCHANT_NOT_FOUND'], description: 'no such merchant' } }) },
      }),
      patch: operation({
        summary: 'Change a merchant',
        description:
          'Any of callback_url (null removes it), ip_whitelist (replaces the list), status, rate_limit_per_second and low_balance_threshold (null removes it).',
        roles: ['admin'],
        parameters: [merchantId],
        responses: {
          200: ok('The merchant as changed', ref('Merchant')),
          ...refusals({ 404: { codes: ['MERCHANT_NOT_FOUND'], description: 'no such merchant' } }, { body: true }),
        },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.appSecret)]: {
      post: operation({
        summary: 'Rotate the app secret',
        description: 'The new secret is in this reply only; the replaced one keeps verifying for overlap_seconds.',
        roles: ['admin'],
        parameters: [merchantId],
        responses: {
          200: ok('The merchant with its new app secret', ref('Merchant')),
          ...refusals({ 404: { codes: ['MERCHANT_NOT_FOUND'], description: 'no such merchant' } }, { body: true }),
        },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.previousAppSecret)]: {
      delete: operation({
        summary: "End a rotation's overlap early",
        roles: ['admin'],
        parameters: [merchantId],
        responses: { 200: ok('The merchant', ref('Merchant')), ...refusals({ 404: { codes: ['MERCHANT_NOT_FOUND'], description: 'no such merchant' } }) },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.deposits)]: {
      post: operation({
        summary: 'Credit a wallet',
        description:
          'The same reference with the same amount again moves no money. Over APPROVAL_THRESHOLD it waits for another admin (202); the same deposit asked again meanwhile is the same request.',
        roles: ['admin'],
        parameters: [merchantId],
        responses: {
          201: ok('The wallet after the deposit', wallet),
          202: approvalRequired,
          ...refusals(
            {
              404: { codes: ['MERCHANT_NOT_FOUND'], description: 'no such merchant' },
              409: {
                codes: ['DEPOSIT_REFERENCE_CONFLICT', 'APPROVAL_PENDING'],
                description: 'The reference was used for another amount, or a request for another amount under it waits for approval',
              },
            },
            { body: true },
          ),
        },
      }),
    },
  };
}

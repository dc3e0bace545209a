import { BACK_OFFICE_ROUTES, documentedPath } from '../../back-office/routes.public';
import { array, boolean, closed, identifier, money, nullable, Schema, string, timestamp } from '../schema-kit';
import { listOf, listParameters, merchantId, ok, operation, PathItems, pathId, refusals, staffName } from './route-kit';

const sku: Schema = closed({
  sku_id: string(),
  product_id: string(),
  name: string(),
  required_account_fields: array(string()),
  supports_account_check: boolean,
  on_shelf: boolean,
  route: nullable(string()),
});

/** The catalogue and a merchant's prices, page by page. */
export function catalogueListings(): PathItems {
  return {
    [documentedPath(BACK_OFFICE_ROUTES.products)]: {
      get: operation({
        summary: 'List products, in id order',
        roles: ['admin'],
        parameters: listParameters([['name', 'A part of the name, any case', string()]]),
        responses: { 200: ok('A page of products', listOf('products', closed({ product_id: string(), name: string() }))), ...refusals({}) },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.skus)]: {
      get: operation({
        summary: 'List SKUs, in id order',
        roles: ['admin'],
        parameters: listParameters([
          ['product_id', 'The product', identifier],
          ['on_shelf', 'true or false', { enum: ['true', 'false'] }],
          ['name', 'A part of the name, any case', string()],
        ]),
        responses: { 200: ok('A page of SKUs', listOf('skus', sku)), ...refusals({}) },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.prices)]: {
      get: operation({
        summary: "List a merchant's prices, in SKU order",
        roles: ['admin'],
        parameters: [merchantId, ...listParameters([])],
        responses: {
          200: ok(
            'A page of prices',
            listOf(
              'prices',
              closed({
                merchant_id: string(),
                sku_id: string(),
                price: money,
                sku_name: string(),
                on_shelf: boolean,
                updated_at: timestamp,
                updated_by: string(),
                updated_by_name: staffName('updated_by'),
              }),
            ),
          ),
          ...refusals({ 404: { codes: ['MERCHANT_NOT_FOUND'], description: 'no such merchant' } }),
        },
      }),
    },
  };
}

/** Products, SKUs and prices created, replaced or set. */
export function catalogueChanges(): PathItems {
  return {
    [documentedPath(BACK_OFFICE_ROUTES.product)]: {
      put: operation({
        summary: 'Create or replace a product',
        roles: ['admin'],
        parameters: [pathId('product_id', 'The product')],
        responses: { 200: ok('The product', closed({ product_id: string(), name: string() })), ...refusals({}, { body: true }) },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.sku)]: {
      put: operation({
        summary: 'Create or replace a SKU',
        roles: ['admin'],
        parameters: [pathId('sku_id', 'The SKU')],
        responses: {
          200: ok('The SKU', sku),
          ...refusals({ 404: { codes: ['PRODUCT_NOT_FOUND'], description: 'no such product' } }, { body: true }),
        },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.price)]: {
      put: operation({
        summary: "Set a merchant's price for a SKU",
        roles: ['admin'],
        parameters: [merchantId, pathId('sku_id', 'The SKU')],
        responses: {
          200: ok('The price', closed({ merchant_id: string(), sku_id: string(), price: money })),
          ...refusals({ 404: { codes: ['MERCHANT_NOT_FOUND', 'SKU_NOT_FOUND'], description: 'no such merchant, or no such SKU' } }, { body: true }),
        },
      }),
    },
  };
}

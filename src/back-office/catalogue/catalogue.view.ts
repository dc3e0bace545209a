import { isoTimestamp } from '../../shared/clock';
import { formatAmount } from '../../shared/money';

export interface ProductRow {
  product_id: string;
  name: string;
}

export interface SkuRow {
  sku_id: string;
  product_id: string;
  name: string;
  required_account_fields: string[];
  supports_account_check: boolean;
  on_shelf: boolean;
  route: string | null;
}

export interface PriceRow {
  merchant_id: string;
  sku_id: string;
  /** int8 arrives from pg as a string of minor units. */
  price: string;
}

export interface ProductView {
  product_id: string;
  name: string;
}

export interface SkuView {
  sku_id: string;
  product_id: string;
  name: string;
  required_account_fields: string[];
  supports_account_check: boolean;
  on_shelf: boolean;
  route: string | null;
}

/** A merchant's price for a SKU, as a two-decimal string. */
export interface PriceView {
  merchant_id: string;
  sku_id: string;
  price: string;
}

/** A line of a merchant's price list: the price with the SKU's name and who set it when. */
export interface PriceListView extends PriceView {
  sku_name: string;
  on_shelf: boolean;
  updated_at: string;
  updated_by: string;
  updated_by_name: string | null;
}

export const productView = (row: ProductRow): ProductView => ({ product_id: row.product_id, name: row.name });

export const skuView = (row: SkuRow): SkuView => ({
  sku_id: row.sku_id,
  product_id: row.product_id,
  name: row.name,
  required_account_fields: row.required_account_fields,
  supports_account_check: row.supports_account_check,
  on_shelf: row.on_shelf,
  route: row.route,
});

export const priceView = (row: PriceRow): PriceView => ({ merchant_id: row.merchant_id, sku_id: row.sku_id, price: formatAmount(BigInt(row.price)) });

export interface PriceListRow extends PriceRow {
  sku_name: string;
  on_shelf: boolean;
  updated_at: Date;
  updated_by: string;
  updated_by_name: string | null;
}

export const priceListView = (row: PriceListRow): PriceListView => ({
  ...priceView(row),
  sku_name: row.sku_name,
  on_shelf: row.on_shelf,
  updated_at: isoTimestamp(row.updated_at),
  updated_by: row.updated_by,
  updated_by_name: row.updated_by_name,
});

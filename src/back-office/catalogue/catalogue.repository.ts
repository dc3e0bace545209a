import { Inject, Injectable } from '@nestjs/common';
import { Pool, PoolClient } from 'pg';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { ApiError } from '../../infrastructure/http/api-error';
import { formatAmount, Minor } from '../../shared/money';
import { recordAudit } from '../staff-audit-trail/audit-trail';
import { Conditions, containing } from '../http/listing';
import { inTransaction } from '../../infrastructure/postgres/transactions';
import { staffNameSql } from '../display-names/display-names';
import { PriceListRow, PriceRow, ProductRow, SkuRow } from './catalogue.view';

export type SkuInput = Omit<SkuRow, 'sku_id'>;

const SKU_COLUMNS = 'sku_id, product_id, name, required_account_fields, supports_account_check, on_shelf, route';

/**
 * Products, SKUs and merchant prices, written by PUT (create or replace).
 * The audit row says whether the PUT created or replaced, and what it replaced.
 * (`xmax = 0` on the returned row is how Postgres tells an insert from an update.)
 */
@Injectable()
export class CatalogueRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** In id order; `after` is the last id of the previous page. */
  async listProducts(filter: { name?: string; after?: string }, limit: number): Promise<ProductRow[]> {
    const where = new Conditions().addIf(filter.name === undefined ? undefined : containing(filter.name), 'name ilike ?').addIf(filter.after, 'product_id > ?');
    const { rows } = await this.pool.query<ProductRow>(
      `select product_id, name from products ${where.where()} order by product_id limit ${where.next(limit + 1)}`,
      where.values,
    );
    return rows;
  }

  async listSkus(filter: { productId?: string; onShelf?: boolean; name?: string; after?: string }, limit: number): Promise<SkuRow[]> {
    const where = new Conditions()
      .addIf(filter.productId, 'product_id = ?')
      .addIf(filter.onShelf, 'on_shelf = ?')
      .addIf(filter.name === undefined ? undefined : containing(filter.name), 'name ilike ?')
      .addIf(filter.after, 'sku_id > ?');
    const { rows } = await this.pool.query<SkuRow>(
      `select ${SKU_COLUMNS} from skus ${where.where()} order by sku_id limit ${where.next(limit + 1)}`,
      where.values,
    );
    return rows;
  }

  /** A merchant's prices in SKU order, with the SKU's name and shelf state beside each; undefined for an unknown merchant. */
  async listPrices(merchantId: string, after: string | undefined, limit: number): Promise<PriceListRow[] | undefined> {
    const { rowCount } = await this.pool.query('select 1 from merchants where merchant_id = $1', [merchantId]);
    if (!rowCount) return undefined;
    const where = new Conditions().add('p.merchant_id = ?', merchantId).addIf(after, 'p.sku_id > ?');
    const { rows } = await this.pool.query<PriceListRow>(
      `select p.merchant_id, p.sku_id, p.price, s.name as sku_name, s.on_shelf, p.updated_at, p.updated_by, ${staffNameSql('p.updated_by')} as updated_by_name
       from merchant_prices p join skus s using (sku_id) ${where.where()} order by p.sku_id limit ${where.next(limit + 1)}`,
      where.values,
    );
    return rows;
  }

  async putProduct(productId: string, name: string, staffId: string): Promise<ProductRow> {
    return inTransaction(this.pool, async (client) => {
      const previous = await selectForUpdate<ProductRow>(client, 'select product_id, name from products where product_id = $1 for update', [productId]);
      const { rows } = await client.query<ProductRow & { created: boolean }>(
        `insert into products (product_id, name, updated_by) values ($1, $2, $3)
         on conflict (product_id) do update set name = excluded.name, updated_at = now(), updated_by = excluded.updated_by
         returning product_id, name, (xmax = 0) as created`,
        [productId, name, staffId],
      );
      const { created, ...row } = rows[0];
      await recordAudit(client, {
        staffId,
        action: created ? 'product.created' : 'product.updated',
        target: `product:${productId}`,
        details: { name, previous: previous ?? null },
      });
      return row;
    });
  }

  async putSku(skuId: string, sku: SkuInput, staffId: string): Promise<SkuRow> {
    return inTransaction(this.pool, async (client) => {
      if (!(await exists(client, 'select 1 from products where product_id = $1 for key share', [sku.product_id]))) {
        throw new ApiError(404, 'PRODUCT_NOT_FOUND', `No product ${sku.product_id}`, 'product_id');
      }
      const previous = await selectForUpdate<SkuRow>(client, `select ${SKU_COLUMNS} from skus where sku_id = $1 for update`, [skuId]);
      const { rows } = await client.query<SkuRow & { created: boolean }>(
        `insert into skus (sku_id, product_id, name, required_account_fields, supports_account_check, on_shelf, route, updated_by)
         values ($1, $2, $3, $4, $5, $6, $7, $8)
         on conflict (sku_id) do update set
           product_id = excluded.product_id, name = excluded.name, required_account_fields = excluded.required_account_fields,
           supports_account_check = excluded.supports_account_check, on_shelf = excluded.on_shelf, route = excluded.route,
           updated_at = now(), updated_by = excluded.updated_by
         returning ${SKU_COLUMNS}, (xmax = 0) as created`,
        [skuId, sku.product_id, sku.name, sku.required_account_fields, sku.supports_account_check, sku.on_shelf, sku.route, staffId],
      );
      const { created, ...row } = rows[0];
      const { sku_id: _id, ...previousValues } = previous ?? { sku_id: '' };
      await recordAudit(client, {
        staffId,
        action: created ? 'sku.created' : 'sku.updated',
        target: `sku:${skuId}`,
        details: { ...sku, previous: previous ? previousValues : null },
      });
      return row;
    });
  }

  async putPrice(merchantId: string, skuId: string, price: Minor, staffId: string): Promise<PriceRow> {
    return inTransaction(this.pool, async (client) => {
      if (!(await exists(client, 'select 1 from merchants where merchant_id = $1 for key share', [merchantId]))) {
        throw new ApiError(404, 'MERCHANT_NOT_FOUND', `No merchant ${merchantId}`, 'merchant_id');
      }
      if (!(await exists(client, 'select 1 from skus where sku_id = $1 for key share', [skuId]))) {
        throw new ApiError(404, 'SKU_NOT_FOUND', `No SKU ${skuId}`, 'sku_id');
      }
      const previous = await selectForUpdate<{ price: string }>(client, 'select price from merchant_prices where merchant_id = $1 and sku_id = $2 for update', [
        merchantId,
        skuId,
      ]);
      const { rows } = await client.query<PriceRow>(
        `insert into merchant_prices (merchant_id, sku_id, price, updated_by) values ($1, $2, $3, $4)
         on conflict (merchant_id, sku_id) do update set price = excluded.price, updated_at = now(), updated_by = excluded.updated_by
         returning merchant_id, sku_id, price`,
        [merchantId, skuId, price.toString(), staffId],
      );
      await recordAudit(client, {
        staffId,
        action: 'price.set',
        target: `merchant:${merchantId}`,
        details: { sku_id: skuId, price: formatAmount(price), previous_price: previous ? formatAmount(BigInt(previous.price)) : null },
      });
      return rows[0];
    });
  }
}

async function selectForUpdate<T extends object>(client: PoolClient, sql: string, params: unknown[]): Promise<T | undefined> {
  const { rows } = await client.query<T>(sql, params);
  return rows[0];
}

async function exists(client: PoolClient, sql: string, params: unknown[]): Promise<boolean> {
  const { rowCount } = await client.query(sql, params);
  return (rowCount ?? 0) > 0;
}

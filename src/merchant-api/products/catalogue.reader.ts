import { Pool } from 'pg';
import { StatementBatcher } from '../../infrastructure/postgres/statement-batcher';

export interface PricedSku {
  skuId: string;
  requiredAccountFields: string[];
  onShelf: boolean;
  route: string | null;
  /** This merchant's price in minor units, or undefined when it has none. */
  price?: bigint;
}

export interface ProductListing {
  product_id: string;
  name: string;
  skus: {
    sku_id: string;
    name: string;
    price: bigint;
    required_account_fields: string[];
    supports_account_check: boolean;
  }[];
}

interface SkuRow {
  item: number;
  required_account_fields: string[];
  on_shelf: boolean;
  route: string | null;
  price: string | null;
}

/** The catalogue as one merchant sees it: its own prices, SKUs on shelf. */
export class CatalogueReader {
  /** Concurrent submits look their SKUs up in one statement. */
  private readonly lookups: StatementBatcher<{ merchantId: string; skuId: string }, PricedSku | undefined>;

  constructor(private readonly pool: Pool) {
    this.lookups = new StatementBatcher((batch) => this.lookUp(batch), { maxBatch: 200, maxInFlight: 2 });
  }

  sku(merchantId: string, skuId: string): Promise<PricedSku | undefined> {
    return this.lookups.run({ merchantId, skuId });
  }

  private async lookUp(batch: readonly { merchantId: string; skuId: string }[]): Promise<(PricedSku | undefined)[]> {
    const { rows } = await this.pool.query<SkuRow>(
      `select r.item::int - 1 as item, s.required_account_fields, s.on_shelf, s.route, p.price::text as price
       from unnest($1::text[], $2::text[]) with ordinality as r(sku_id, merchant_id, item)
       join skus s on s.sku_id = r.sku_id
       left join merchant_prices p on p.sku_id = s.sku_id and p.merchant_id = r.merchant_id`,
      [batch.map((b) => b.skuId), batch.map((b) => b.merchantId)],
    );
    const found: (PricedSku | undefined)[] = batch.map(() => undefined);
    for (const row of rows) {
      found[row.item] = {
        skuId: batch[row.item].skuId,
        requiredAccountFields: row.required_account_fields,
        onShelf: row.on_shelf,
        route: row.route,
        price: row.price === null ? undefined : BigInt(row.price),
      };
    }
    return found;
  }

  async products(merchantId: string): Promise<ProductListing[]> {
    const { rows } = await this.pool.query<{
      product_id: string;
      product_name: string;
      sku_id: string;
      sku_name: string;
      price: string;
      required_account_fields: string[];
      supports_account_check: boolean;
    }>(
      `select pr.product_id, pr.name as product_name, s.sku_id, s.name as sku_name, p.price::text as price,
              s.required_account_fields, s.supports_account_check
       from merchant_prices p
       join skus s on s.sku_id = p.sku_id and s.on_shelf
       join products pr on pr.product_id = s.product_id
       where p.merchant_id = $1
       order by pr.product_id, s.sku_id`,
      [merchantId],
    );
    const products = new Map<string, ProductListing>();
    for (const row of rows) {
      const product = products.get(row.product_id) ?? { product_id: row.product_id, name: row.product_name, skus: [] };
      products.set(row.product_id, product);
      product.skus.push({
        sku_id: row.sku_id,
        name: row.sku_name,
        price: BigInt(row.price),
        required_account_fields: row.required_account_fields,
        supports_account_check: row.supports_account_check,
      });
    }
    return [...products.values()];
  }
}

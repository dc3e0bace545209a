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
  /** Null: no SKU of that id. */
  sku_id: string | null;
  required_account_fields: string[];
  on_shelf: boolean;
  route: string | null;
  price: string | null;
  revision: string;
}

/** A SKU as one merchant saw it at a catalogue revision (undefined: no such SKU then). */
interface Remembered {
  revision: string;
  sku: PricedSku | undefined;
}

/** Entries kept at most; past it the cache starts again (it holds what is in use, so it refills at once). */
const MAX_REMEMBERED = 10_000;

/**
 * The catalogue as one merchant sees it: its own prices, SKUs on shelf.
 *
 * A submit's SKU and price are those of the catalogue revision its request
 * was admitted at (ReplayGuard reads the revision in the statement that
 * consumes the nonce). Every change to SKUs or prices moves the
 * revision in its own transaction (a trigger, whoever writes), so a SKU
 * looked up at the same revision is still what the catalogue says, and is
 * taken from memory. A request admitted at any other revision looks its SKU
 * up again; after a change, the first of them empties the cache.
 */
export class CatalogueReader {
  /** Concurrent submits look their SKUs up in one statement. */
  private readonly lookups: StatementBatcher<{ merchantId: string; skuId: string }, Remembered>;
  /** By merchant and SKU id. */
  private readonly remembered = new Map<string, Remembered>();
  private newestRevision = -1n;

  constructor(private readonly pool: Pool) {
    this.lookups = new StatementBatcher((batch) => this.lookUp(batch), { maxBatch: 200, maxInFlight: 2 });
  }

  /** The SKU with this merchant's price, as of the catalogue revision `admittedAt` or later. */
  async sku(merchantId: string, skuId: string, admittedAt: string): Promise<PricedSku | undefined> {
    const key = `${merchantId}\u0000${skuId}`;
    const known = this.remembered.get(key);
    if (known?.revision === admittedAt) return known.sku;
    const found = await this.lookups.run({ merchantId, skuId });
    this.remember(key, found);
    return found.sku;
  }

  private remember(key: string, found: Remembered): void {
    const revision = BigInt(found.revision);
    if (revision < this.newestRevision) return;
    if (revision > this.newestRevision || this.remembered.size >= MAX_REMEMBERED) {
      this.remembered.clear();
      this.newestRevision = revision;
    }
    this.remembered.set(key, found);
  }

  private async lookUp(batch: readonly { merchantId: string; skuId: string }[]): Promise<Remembered[]> {
    // One statement, one snapshot: the rows and the revision they belong to.
    const { rows } = await this.pool.query<SkuRow>(
      `select r.item::int - 1 as item, s.sku_id, s.required_account_fields, s.on_shelf, s.route, p.price::text as price,
              (select c.revision::text from catalogue_revision c) as revision
       from unnest($1::text[], $2::text[]) with ordinality as r(sku_id, merchant_id, item)
       left join skus s on s.sku_id = r.sku_id
       left join merchant_prices p on p.sku_id = s.sku_id and p.merchant_id = r.merchant_id`,
      [batch.map((b) => b.skuId), batch.map((b) => b.merchantId)],
    );
    const found: Remembered[] = new Array(batch.length);
    for (const row of rows) {
      found[row.item] = {
        revision: row.revision,
        sku:
          row.sku_id === null
            ? undefined
            : {
                skuId: row.sku_id,
                requiredAccountFields: row.required_account_fields,
                onShelf: row.on_shelf,
                route: row.route,
                price: row.price === null ? undefined : BigInt(row.price),
              },
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

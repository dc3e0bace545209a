import { Pool } from 'pg';

/** The upstream route of each SKU, as the catalogue (provisioning) sets it, for fulfilment. */
export class SkuRoutes {
  constructor(private readonly pool: Pool) {}

  /** One statement for many SKUs (jobs running together look theirs up at once); null for no route or an unknown SKU. */
  async of(skuIds: readonly string[]): Promise<(string | null)[]> {
    const { rows } = await this.pool.query<{ sku_id: string; route: string | null }>({
      name: 'sku-routes',
      text: 'select sku_id, route from skus where sku_id = any($1)',
      values: [[...new Set(skuIds)]],
    });
    const routes = new Map(rows.map((row) => [row.sku_id, row.route]));
    return skuIds.map((skuId) => routes.get(skuId) ?? null);
  }
}

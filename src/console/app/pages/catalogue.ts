import { api, segment } from '../api';
import { errorBox } from '../components/feedback';
import { form } from '../components/form';
import { table } from '../components/table';
import { h } from '../dom';
import { refresh } from '../navigation';
import type { ListPage, ProductView, SkuView } from '../replies';

const yesNo = (value: boolean) => (value ? 'yes' : 'no');

/** Products and SKUs, each created or replaced by its id. */
export async function cataloguePage(main: HTMLElement) {
  const [products, skus] = await Promise.all([
    api<ListPage<'products', ProductView>>('GET', '/admin/v1/products?limit=200'),
    api<ListPage<'skus', SkuView>>('GET', '/admin/v1/skus?limit=200'),
  ]);
  const productSlot = h('div');
  const skuSlot = h('div');
  main.append(
    h('h1', {}, 'Catalogue'),
    h('h2', {}, 'Products'),
    products.ok
      ? table(
          [
            ['Product id', (p) => p.product_id],
            ['Name', (p) => p.name],
          ],
          products.data.products,
          'No product yet.',
        )
      : errorBox(products),
    form(
      [
        { name: 'product_id', label: 'Product id', required: true },
        { name: 'name', label: 'Name', required: true },
      ],
      'Save product',
      async (values) => {
        const reply = await api<ProductView>('PUT', `/admin/v1/products/${segment(values.product_id ?? '')}`, { name: values.name });
        if (reply.ok) await refresh();
        else productSlot.replaceChildren(errorBox(reply));
      },
      { id: 'put-product' },
    ),
    productSlot,
    h('h2', {}, 'SKUs'),
    skus.ok
      ? table(
          [
            ['SKU id', (s) => s.sku_id],
            ['Product', (s) => s.product_id],
            ['Name', (s) => s.name],
            ['Account fields', (s) => s.required_account_fields.join(', ')],
            ['Account check', (s) => yesNo(s.supports_account_check)],
            ['On shelf', (s) => yesNo(s.on_shelf)],
            ['Route', (s) => s.route ?? 'none'],
          ],
          skus.data.skus,
          'No SKU yet.',
        )
      : errorBox(skus),
    form(
      [
        { name: 'sku_id', label: 'SKU id', required: true },
        { name: 'product_id', label: 'Product id', required: true },
        { name: 'name', label: 'Name', required: true },
        { name: 'required_account_fields', label: 'Account fields (comma-separated)' },
        { name: 'route', label: 'Route', value: 'default' },
        { name: 'supports_account_check', label: 'Supports account check', type: 'checkbox' },
        { name: 'on_shelf', label: 'On shelf', type: 'checkbox', value: true },
      ],
      'Save SKU',
      async (values, _form, checks) => {
        const body = {
          product_id: values.product_id,
          name: values.name,
          required_account_fields: (values.required_account_fields ?? '').split(/[\s,]+/).filter(Boolean),
          supports_account_check: checks.supports_account_check,
          on_shelf: checks.on_shelf,
          route: values.route ?? null,
        };
        const reply = await api<SkuView>('PUT', `/admin/v1/skus/${segment(values.sku_id ?? '')}`, body);
        if (reply.ok) await refresh();
        else skuSlot.replaceChildren(errorBox(reply));
      },
      { id: 'put-sku' },
    ),
    skuSlot,
  );
}

import { api } from './api';
import type { ListPage, MerchantView } from './replies';

/** The merchants to choose from (the first 200, newest first), or none when the list cannot be read. */
export async function merchantOptions(): Promise<MerchantView[]> {
  const reply = await api<ListPage<'merchants', MerchantView>>('GET', '/admin/v1/merchants?limit=200');
  return reply.ok ? reply.data.merchants : [];
}

/** A merchant as a choice in a list: its name, and its id to tell two of a name apart. */
export const merchantChoice = (m: MerchantView): [string, string] => [m.merchant_id, `${m.name} (${m.merchant_id})`];

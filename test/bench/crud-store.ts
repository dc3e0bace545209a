/**
 * The tables of the benchmark's conventional CRUD submit server
 * (crud-server.ts): a wallet is a row with balance and frozen, an order a row
 * unique per (merchant, out_trade_no), a nonce a row of its own.
 */
import { Pool } from 'pg';

export const CRUD_SCHEMA = `
  create table merchants (
    id         bigint generated always as identity primary key,
    api_key    text   not null unique,
    app_secret text   not null,
    currency   text   not null,
    balance    bigint not null,
    frozen     bigint not null default 0,
    callback_url text,
    check (frozen >= 0 and frozen <= balance)
  );
  create table prices (
    merchant_id bigint not null references merchants,
    sku_id      text   not null,
    amount      bigint not null,
    primary key (merchant_id, sku_id)
  );
  create table nonces (
    merchant_id bigint      not null,
    nonce       text        not null,
    expires_at  timestamptz not null,
    primary key (merchant_id, nonce)
  );
  create table orders (
    order_no       bigint      generated always as identity primary key,
    merchant_id    bigint      not null references merchants,
    out_trade_no   text        not null,
    sku_id         text        not null,
    account_id     text        not null,
    account_fields jsonb       not null,
    amount         bigint      not null,
    status         text        not null default 'processing',
    fail_code      text,
    created_at     timestamptz not null default now(),
    completed_at   timestamptz,
    unique (merchant_id, out_trade_no)
  );
  create table jobs (
    id        bigint      generated always as identity primary key,
    kind      text        not null check (kind in ('topup', 'callback')),
    order_no  bigint      not null references orders,
    attempts  int         not null default 0,
    run_after timestamptz not null default now()
  );
  create index jobs_due on jobs (run_after);
  create table callback_attempts (
    id           bigint      generated always as identity primary key,
    order_no     bigint      not null references orders,
    attempt      int         not null,
    http_status  int         not null,
    acknowledged boolean     not null,
    at           timestamptz not null default now()
  );`;

export interface CrudMerchant {
  apiKey: string;
  appSecret: string;
  /** Minor units. */
  balance: bigint;
  /** Where the whole-life peer calls back. */
  callbackUrl?: string;
}

/** Creates the tables and the merchants, each with `price` (minor units) for `skuId`. */
export async function provisionCrud(pool: Pool, merchants: readonly CrudMerchant[], skuId: string, price: bigint): Promise<void> {
  await pool.query(CRUD_SCHEMA);
  for (const m of merchants) {
    await pool.query(
      `with m as (insert into merchants (api_key, app_secret, currency, balance, callback_url) values ($1, $2, 'USD', $3, $6) returning id)
       insert into prices (merchant_id, sku_id, amount) select id, $4, $5 from m`,
      [m.apiKey, m.appSecret, m.balance.toString(), skuId, price.toString(), m.callbackUrl ?? null],
    );
  }
}

export interface CrudTotals {
  orders: number;
  /** Sum of the orders' amounts, minor units. */
  ordered: bigint;
  /** Sum of the wallets' frozen funds, minor units. */
  frozen: bigint;
}

export async function crudTotals(pool: Pool): Promise<CrudTotals> {
  const { rows } = await pool.query<{ orders: string; ordered: string; frozen: string }>(
    `select (select count(*) from orders) as orders,
            (select coalesce(sum(amount), 0) from orders) as ordered,
            (select coalesce(sum(frozen), 0) from merchants) as frozen`,
  );
  return { orders: Number(rows[0].orders), ordered: BigInt(rows[0].ordered), frozen: BigInt(rows[0].frozen) };
}

export interface CrudWholeLifeTotals {
  /** Sum of the wallets' balances, minor units. */
  balances: bigint;
  frozen: bigint;
  /** Sums of the orders' amounts by status, minor units. */
  succeeded: bigint;
  open: bigint;
  final: number;
  /** Final orders without an acknowledged callback. */
  notCalledBack: number;
  jobsLeft: number;
}

export async function crudWholeLifeTotals(pool: Pool): Promise<CrudWholeLifeTotals> {
  const { rows } = await pool.query<Record<keyof CrudWholeLifeTotals, string>>(
    `select (select coalesce(sum(balance), 0) from merchants) as balances,
            (select coalesce(sum(frozen), 0) from merchants) as frozen,
            (select coalesce(sum(amount), 0) from orders where status = 'success') as succeeded,
            (select coalesce(sum(amount), 0) from orders where status in ('processing', 'unknown')) as open,
            (select count(*) from orders where status in ('success', 'failed')) as final,
            (select count(*) from orders o where status in ('success', 'failed')
               and not exists (select from callback_attempts a where a.order_no = o.order_no and a.acknowledged)) as "notCalledBack",
            (select count(*) from jobs) as "jobsLeft"`,
  );
  const r = rows[0];
  return {
    balances: BigInt(r.balances),
    frozen: BigInt(r.frozen),
    succeeded: BigInt(r.succeeded),
    open: BigInt(r.open),
    final: Number(r.final),
    notCalledBack: Number(r.notCalledBack),
    jobsLeft: Number(r.jobsLeft),
  };
}

import { Migration } from '../infrastructure/postgres/migrations';

/**
 * Provisioning data: staff, merchants, the catalogue and prices. These are
 * settings, not money: they live in plain tables, every change stamped with
 * who made it and when, and every change also written to back_office_audit.
 */
export const provisioningMigrations: readonly Migration[] = [
  {
    id: 'provisioning/001-tables',
    sql: `
      create table staff (
        staff_id   text        primary key,
        name       text        not null,
        role       text        not null check (role in ('admin', 'reconciler', 'auditor')),
        -- SHA-256 of the bearer token; the token itself is shown once.
        token_hash bytea       not null unique,
        created_at timestamptz not null default now(),
        created_by text        not null
      );
      create table merchants (
        merchant_id           text        primary key,
        name                  text        not null,
        currency              text        not null,
        api_key               text        not null unique,
        -- AES-256-GCM under SECRETS_KEY: iv (12 bytes) | tag (16 bytes) | ciphertext.
        app_secret_enc        bytea       not null,
        callback_url          text,
        ip_whitelist          text[]      not null default '{}',
        status                text        not null default 'active' check (status in ('active', 'suspended')),
        rate_limit_per_second int         not null check (rate_limit_per_second > 0),
        created_at            timestamptz not null default now(),
        created_by            text        not null,
        updated_at            timestamptz not null default now(),
        updated_by            text        not null
      );
      create table products (
        product_id text        primary key,
        name       text        not null,
        updated_at timestamptz not null default now(),
        updated_by text        not null
      );
      create table skus (
        sku_id                  text        primary key,
        product_id              text        not null references products,
        name                    text        not null,
        required_account_fields text[]      not null default '{}',
        supports_account_check  boolean     not null default false,
        on_shelf                boolean     not null default true,
        -- The upstream route; null means the SKU cannot be fulfilled now.
        route                   text        default 'default',
        updated_at              timestamptz not null default now(),
        updated_by              text        not null
      );
      create table merchant_prices (
        merchant_id text        not null references merchants,
        sku_id      text        not null references skus,
        price       bigint      not null check (price > 0),
        updated_at  timestamptz not null default now(),
        updated_by  text        not null,
        primary key (merchant_id, sku_id)
      );
      create table back_office_audit (
        id       bigint      generated always as identity primary key,
        at       timestamptz not null default now(),
        staff_id text        not null,
        action   text        not null,
        target   text        not null,
        details  jsonb       not null default '{}'
      );
      create index on back_office_audit (target, at);
    `,
  },
  {
    id: 'provisioning/002-app-secret-rotation',
    sql: `
      -- While a rotation's overlap lasts, the replaced secret still verifies
      -- requests (never signs callbacks) until previous_app_secret_valid_until.
      alter table merchants
        add column previous_app_secret_enc         bytea,
        add column previous_app_secret_valid_until timestamptz,
        add constraint previous_app_secret_has_an_end
          check ((previous_app_secret_enc is null) = (previous_app_secret_valid_until is null));
    `,
  },
  {
    id: 'provisioning/003-staff-disable-and-token-rotation',
    sql: `
      -- A disabled member's token stops working at once; the row stays for the audit trail.
      alter table staff
        add column disabled_at      timestamptz,
        add column disabled_by      text,
        add column token_rotated_at timestamptz;
    `,
  },
  {
    id: 'provisioning/004-catalogue-revision',
    sql: `
      -- A counter that every change to SKUs or prices moves, in the changing
      -- transaction, whoever writes (the back office or plain SQL). Submits
      -- read it at admission, so an instance may reuse a SKU and price it
      -- looked up at the same revision without asking again.
      create table catalogue_revision (
        single   boolean primary key default true check (single),
        revision bigint  not null
      );
      insert into catalogue_revision (revision) values (0);
      create function catalogue_revised() returns trigger language plpgsql as $fn$
      begin
        update catalogue_revision set revision = revision + 1;
        return null;
      end $fn$;
      create trigger skus_revise_catalogue after insert or update or delete or truncate on skus
        for each statement execute function catalogue_revised();
      create trigger merchant_prices_revise_catalogue after insert or update or delete or truncate on merchant_prices
        for each statement execute function catalogue_revised();
    `,
  },
  {
    id: 'provisioning/005-low-balance-threshold',
    sql: `
      -- Minor units in the merchant's currency; null: no alert. The operations
      -- dashboard and the topup_merchant_low_balance gauge read the merchants
      -- that have one, and only those, through the partial index.
      alter table merchants add column low_balance_threshold bigint check (low_balance_threshold > 0);
      create index on merchants (merchant_id) where low_balance_threshold is not null;
    `,
  },
];

import { Pool } from 'pg';
import { StatementBatcher } from '../../infrastructure/postgres/statement-batcher';

/** The simulator's answer to a top-up, decided when it first receives the order. */
export type SimulatorReply =
  | { status: 'delivered'; reference: string }
  | { status: 'failed'; code: string; message: string }
  /** Accepted and never answered (accounts ending 999). */
  | { status: 'pending' };

export interface SimulatedTopUp {
  reply: SimulatorReply;
  /** Epoch ms: before it, the top-up is still being delivered and a status query answers pending. */
  readyAt: number;
  /** As received, "1.20" and "USD": the transaction report quotes them. Absent in rows recorded before they were kept. */
  amount?: string;
  currency?: string;
}

/** A top-up with a definitive result, as the transaction report lists it. */
export interface CompletedTopUp extends SimulatedTopUp {
  orderNo: string;
  reply: Exclude<SimulatorReply, { status: 'pending' }>;
}

/** What the simulator received. */
export interface SimulatorStore {
  /** False when it forgets on restart: it then cannot tell that it never received an order. */
  readonly durable: boolean;
  find(orderNo: string): Promise<SimulatedTopUp | undefined>;
  /** Keeps the first top-up recorded for an order; returns the one kept and whether it is this one. */
  record(orderNo: string, topUp: SimulatedTopUp): Promise<{ kept: SimulatedTopUp; first: boolean }>;
  /** The delivered and failed top-ups whose result was ready in [from, to) (epoch ms), by ready time. */
  completedBetween(from: number, to: number): Promise<CompletedTopUp[]>;
}

const isCompleted = (topUp: SimulatedTopUp): topUp is SimulatedTopUp & { reply: CompletedTopUp['reply'] } => topUp.reply.status !== 'pending';

export class MemorySimulatorStore implements SimulatorStore {
  readonly durable = false;
  private readonly topUps = new Map<string, SimulatedTopUp>();

  async find(orderNo: string): Promise<SimulatedTopUp | undefined> {
    return this.topUps.get(orderNo);
  }

  async record(orderNo: string, topUp: SimulatedTopUp) {
    const earlier = this.topUps.get(orderNo);
    if (earlier) return { kept: earlier, first: false };
    this.topUps.set(orderNo, topUp);
    return { kept: topUp, first: true };
  }

  async completedBetween(from: number, to: number): Promise<CompletedTopUp[]> {
    const found: CompletedTopUp[] = [];
    for (const [orderNo, topUp] of this.topUps) {
      if (isCompleted(topUp) && topUp.readyAt >= from && topUp.readyAt < to) found.push({ ...topUp, orderNo });
    }
    return found.sort((a, b) => a.readyAt - b.readyAt || (a.orderNo < b.orderNo ? -1 : 1));
  }
}

interface StoredTopUp {
  order_no: string;
  reply: SimulatorReply;
  ready_at: Date;
  amount: string | null;
  currency: string | null;
}

const topUpOf = (row: StoredTopUp): SimulatedTopUp => ({
  reply: row.reply,
  readyAt: row.ready_at.getTime(),
  ...(row.amount === null ? {} : { amount: row.amount }),
  ...(row.currency === null ? {} : { currency: row.currency }),
});

/**
 * In Postgres (the service's own database for the in-process simulator):
 * survives restarts, shared by instances. Top-ups arriving together are
 * looked up, and recorded, in one statement.
 */
export class PostgresSimulatorStore implements SimulatorStore {
  readonly durable = true;
  private readonly finds = new StatementBatcher<string, SimulatedTopUp | undefined>((orderNos) => this.findAll(orderNos), {
    maxBatch: 500,
    maxInFlight: 2,
  });
  private readonly records = new StatementBatcher<{ orderNo: string; topUp: SimulatedTopUp }, { kept: SimulatedTopUp; first: boolean }>(
    (records) => this.recordAll(records),
    { maxBatch: 500, maxInFlight: 2, isolateFailures: true },
  );

  constructor(private readonly pool: Pool) {}

  find(orderNo: string): Promise<SimulatedTopUp | undefined> {
    return this.finds.run(orderNo);
  }

  record(orderNo: string, topUp: SimulatedTopUp): Promise<{ kept: SimulatedTopUp; first: boolean }> {
    return this.records.run({ orderNo, topUp });
  }

  private async findAll(orderNos: readonly string[]): Promise<(SimulatedTopUp | undefined)[]> {
    const { rows } = await this.pool.query<StoredTopUp>(
      'select order_no, reply, ready_at, amount, currency from upstream_simulator_topups where order_no = any($1)',
      [[...new Set(orderNos)]],
    );
    const found = new Map(rows.map((row) => [row.order_no, topUpOf(row)]));
    return orderNos.map((orderNo) => found.get(orderNo));
  }

  /** The first top-up of each order is kept: the insert's rows, or the row already there (the same order twice in a batch: the first). */
  private async recordAll(records: readonly { orderNo: string; topUp: SimulatedTopUp }[]) {
    const { rows } = await this.pool.query<StoredTopUp & { inserted: boolean }>(
      `with given as (
         select * from jsonb_to_recordset($1::jsonb) as g(order_no text, reply jsonb, ready_at timestamptz, amount text, currency text, item int)
       ),
       inserted as (
         insert into upstream_simulator_topups (order_no, reply, ready_at, amount, currency)
         select distinct on (order_no) order_no, reply, ready_at, amount, currency from given order by order_no, item
         on conflict (order_no) do nothing
         returning order_no, reply, ready_at, amount, currency
       )
       select order_no, reply, ready_at, amount, currency, true as inserted from inserted
       union all
       select t.order_no, t.reply, t.ready_at, t.amount, t.currency, false from upstream_simulator_topups t
       where t.order_no = any($2::text[]) and t.order_no not in (select order_no from inserted)`,
      // The order numbers again as an array: the planner can size it (not the JSON) and walks the primary key instead of scanning the table.
      [
        JSON.stringify(
          records.map(({ orderNo, topUp }, item) => ({
            order_no: orderNo,
            reply: topUp.reply,
            ready_at: new Date(topUp.readyAt),
            amount: topUp.amount ?? null,
            currency: topUp.currency ?? null,
            item,
          })),
        ),
        records.map(({ orderNo }) => orderNo),
      ],
    );
    const kept = new Map(rows.map((row) => [row.order_no, row]));
    const firstTaken = new Set<string>();
    return records.map(({ orderNo }) => {
      const row = kept.get(orderNo);
      if (!row) return new Error(`no record kept for ${orderNo}`);
      const first = row.inserted && !firstTaken.has(orderNo);
      firstTaken.add(orderNo);
      return { kept: topUpOf(row), first };
    });
  }

  async completedBetween(from: number, to: number): Promise<CompletedTopUp[]> {
    const { rows } = await this.pool.query<StoredTopUp>(
      `select order_no, reply, ready_at, amount, currency from upstream_simulator_topups
       where ready_at >= $1 and ready_at < $2 and reply->>'status' in ('delivered', 'failed')
       order by ready_at, order_no`,
      [new Date(from), new Date(to)],
    );
    return rows.map((row) => ({ ...topUpOf(row), orderNo: row.order_no }) as CompletedTopUp);
  }
}

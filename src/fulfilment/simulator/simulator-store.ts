import { Pool } from 'pg';
import { Migration } from '../../infrastructure/postgres/migrations';

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
}

/** What the simulator received. */
export interface SimulatorStore {
  /** False when it forgets on restart: it then cannot tell that it never received an order. */
  readonly durable: boolean;
  find(orderNo: string): Promise<SimulatedTopUp | undefined>;
  /** Keeps the first top-up recorded for an order; returns the one kept and whether it is this one. */
  record(orderNo: string, topUp: SimulatedTopUp): Promise<{ kept: SimulatedTopUp; first: boolean }>;
}

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
}

export const simulatorMigrations: readonly Migration[] = [
  {
    id: 'upstream-simulator/001-topups',
    sql: `
      -- What the built-in upstream simulator received, so that it answers the
      -- same after a restart. Not the service's data: the simulator's own.
      create table upstream_simulator_topups (
        order_no    text        primary key,
        reply       jsonb       not null,
        ready_at    timestamptz not null,
        received_at timestamptz not null default now()
      );
    `,
  },
];

/** In Postgres (the service's own database for the in-process simulator): survives restarts, shared by instances. */
export class PostgresSimulatorStore implements SimulatorStore {
  readonly durable = true;

  constructor(private readonly pool: Pool) {}

  async find(orderNo: string): Promise<SimulatedTopUp | undefined> {
    const { rows } = await this.pool.query<{ reply: SimulatorReply; ready_at: Date }>(
      'select reply, ready_at from upstream_simulator_topups where order_no = $1',
      [orderNo],
    );
    return rows[0] && { reply: rows[0].reply, readyAt: rows[0].ready_at.getTime() };
  }

  async record(orderNo: string, topUp: SimulatedTopUp) {
    const { rowCount } = await this.pool.query(
      'insert into upstream_simulator_topups (order_no, reply, ready_at) values ($1, $2, $3) on conflict (order_no) do nothing',
      [orderNo, JSON.stringify(topUp.reply), new Date(topUp.readyAt)],
    );
    if (rowCount === 1) return { kept: topUp, first: true };
    return { kept: (await this.find(orderNo))!, first: false };
  }
}

/**
 * How fast this machine runs a fixed piece of a submit's work right now: an
 * HMAC-SHA256 over a submit's body and a JSON.parse of it, in operations per
 * millisecond of this process's CPU. On a shared VM the same work has run at
 * very different speeds minutes apart; the benchmark prints this at its start
 * and at its end so that a reader can see when the machine moved under it.
 */
import { createHmac } from 'node:crypto';

const BODY = JSON.stringify({ out_trade_no: 'bench-speed-probe-0000000000', sku_id: 'SKU-10', account_id: '12345678', account_fields: {} });

function spin(ms: number): { operations: number; cpuMs: number } {
  const cpuStart = process.cpuUsage();
  const until = Date.now() + ms;
  let operations = 0;
  while (Date.now() < until) {
    for (let i = 0; i < 100; i++) {
      createHmac('sha256', 'probe-secret').update(BODY).digest('hex');
      JSON.parse(BODY);
      operations++;
    }
  }
  const cpu = process.cpuUsage(cpuStart);
  return { operations, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/** Operations per ms of CPU over about `ms` of wall time, after a short warm-up; blocks the event loop meanwhile. */
export function machineSpeed(ms = 1000): number {
  spin(200);
  const { operations, cpuMs } = spin(ms);
  return operations / cpuMs;
}

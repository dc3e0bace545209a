/**
 * How fast this machine runs a fixed piece of a submit's work right now: the
 * request's signature (merchant API v2, as the load generator signs it) and
 * a JSON.parse of its body, in operations per
 * millisecond of this process's CPU. On a shared VM the same work has run at
 * very different speeds minutes apart; the benchmark prints this at its start
 * and at its end so that a reader can see when the machine moved under it.
 */
import { sign } from '../../src/merchant-client/signing';
import { SUBMIT_PATH, submitBody } from './load-generator';

const BODY = submitBody('bench-speed-probe-0000000000', 'SKU-10');
const TIMESTAMP = '1800000000';
const NONCE = '5f0c6a51d0b24c6e9a3e1f7b2d4c8a90';

function spin(ms: number): { operations: number; cpuMs: number } {
  const cpuStart = process.cpuUsage();
  const until = Date.now() + ms;
  let operations = 0;
  while (Date.now() < until) {
    for (let i = 0; i < 100; i++) {
      sign('probe-secret', TIMESTAMP, NONCE, SUBMIT_PATH, BODY);
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

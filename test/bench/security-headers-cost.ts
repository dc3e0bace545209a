/**
 * What the security headers cost a reply, alone: the HTTP edge's
 * SecurityHeaders.apply on fresh replies to a merchant submit, against the
 * same replies without it, in batches of fresh objects as a server meets
 * them (one reply each, never reused), over several rounds. The submit
 * benchmark cannot resolve a cost this small on a shared machine; this can.
 *
 * node -r ts-node/register/transpile-only test/bench/security-headers-cost.ts
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { SecurityHeaders } from '../../src/infrastructure/http/security-headers';

const BATCH = 500;
const BATCHES = 400;
const ROUNDS = 7;

const securityHeaders = new SecurityHeaders(0);
const socket = new Socket();

/** Nanoseconds a reply, from a reply's creation to its Content-Type, with or without the security headers. */
function nanosecondsPerReply(withHeaders: boolean): number {
  let total = 0n;
  for (let b = 0; b < BATCHES; b++) {
    const requests = Array.from({ length: BATCH }, () => Object.assign(new IncomingMessage(socket), { url: '/api/v2/topup/submit' }));
    const responses = requests.map((request) => new ServerResponse(request));
    const started = process.hrtime.bigint();
    for (let i = 0; i < BATCH; i++) {
      if (withHeaders) securityHeaders.apply(requests[i], responses[i]);
      responses[i].setHeader('Content-Type', 'application/json; charset=utf-8');
    }
    total += process.hrtime.bigint() - started;
  }
  return Number(total) / (BATCH * BATCHES);
}

const costs: number[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  const without = nanosecondsPerReply(false);
  const withHeaders = nanosecondsPerReply(true);
  costs.push(withHeaders - without);
  console.log(`round ${round}: ${without.toFixed(0)} ns a reply without the headers, ${withHeaders.toFixed(0)} ns with them`);
}
const sorted = [...costs].sort((a, b) => a - b);
const probe = new ServerResponse(Object.assign(new IncomingMessage(socket), { url: '/api/v2/topup/submit' }));
securityHeaders.apply(probe.req, probe);
const bytes = Object.entries(probe.getHeaders()).reduce((sum, [name, value]) => sum + name.length + 4 + String(value).length, 0);
console.log(
  `the headers cost ${sorted[Math.floor(sorted.length / 2)].toFixed(0)} ns a reply (median of ${ROUNDS} rounds; ${sorted[0].toFixed(0)}-${sorted[sorted.length - 1].toFixed(0)}) and add ${bytes} bytes to it`,
);

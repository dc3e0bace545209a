/** Runs the upstream simulator on its own: `npm run upstream-sim` (PORT, default 8090; UPSTREAM_SIM_DELAY_MS, default 200). */
import { startUpstreamSimulator } from './upstream-simulator';

async function main() {
  const port = Number(process.env.PORT ?? 8090);
  const deliveryDelayMs = Number(process.env.UPSTREAM_SIM_DELAY_MS ?? 200);
  if (!Number.isInteger(port) || !Number.isInteger(deliveryDelayMs)) throw new Error('PORT and UPSTREAM_SIM_DELAY_MS must be integers');
  const simulator = await startUpstreamSimulator({ port, host: '0.0.0.0', deliveryDelayMs });
  console.log(`upstream simulator listening on port ${port} (delivery delay ${deliveryDelayMs} ms)`);
  const stop = () => void simulator.stop().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

void main();

import { Logger } from '@nestjs/common';
import { LedgerObserver } from '../../ledger/ports/ledger-settings.port';
import { logFailure } from '../logging/log-failure';
import { Metrics } from './metrics';

/** The ledger's reports as metrics and log lines. */
export function ledgerObserver(metrics: Metrics): LedgerObserver {
  return {
    walletBatch: (size) => metrics.walletBatchSize.observe(size),
    walletConflict: () => metrics.walletConflicts.inc(),
    walletLoaded: (events, seconds) => {
      metrics.walletLoads.observe(seconds);
      metrics.walletLoadEvents.inc(events);
    },
    backgroundFailure: (source, message, error) => logFailure(new Logger(source), message, error),
  };
}

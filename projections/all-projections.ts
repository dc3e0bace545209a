import { callbackScheduleProjection } from './callback-schedule.projection';
import { fulfilmentJobsProjection } from './fulfilment-jobs.projection';
import { orderMinutesProjection } from './order-minutes.projection';
import { ordersProjection } from './orders.projection';
import { Projection } from './projection';
import { walletsProjection } from './wallets.projection';

/** The read models: rebuilt from the log on demand, verified against it. */
export const allProjections: readonly Projection[] = [ordersProjection, walletsProjection, orderMinutesProjection];

/**
 * Everything fed from the log, the workflow queues (fulfilment jobs, callback
 * schedule) included: one runner applies them all in one transaction per
 * batch, so a callback is never scheduled before the read model shows the
 * order final.
 */
export const fedProjections: readonly Projection[] = [...allProjections, fulfilmentJobsProjection, callbackScheduleProjection];

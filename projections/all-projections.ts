import { ordersProjection } from './orders.projection';
import { Projection } from './projection';
import { walletsProjection } from './wallets.projection';

export const allProjections: readonly Projection[] = [ordersProjection, walletsProjection];

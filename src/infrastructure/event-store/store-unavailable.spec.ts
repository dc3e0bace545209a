import { Metadata, status } from '@grpc/grpc-js';
import {
  AccessDeniedError,
  CancelledError,
  DeadlineExceededError,
  NotLeaderError,
  StreamDeletedError,
  TimeoutError,
  UnavailableError,
  UnknownError,
  WrongExpectedVersionError,
} from '@eventstore/db-client';
import { EsdbReadDeadlineError } from './esdb-event-store';
import { isEventStoreUnavailable } from './store-unavailable';
import { logFailure } from '../logging/log-failure';

/** A gRPC failure as the client receives it from the server. */
function serviceError(code: status, entries: Record<string, string> = {}) {
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(entries)) metadata.set(key, value);
  return Object.assign(new Error(`${code} failed`), { code, details: 'failed', metadata });
}

describe('isEventStoreUnavailable', () => {
  it.each([
    ['UnavailableError', new UnavailableError(serviceError(status.UNAVAILABLE))],
    ['NotLeaderError', new NotLeaderError(serviceError(status.NOT_FOUND, { 'leader-endpoint-host': 'node2', 'leader-endpoint-port': '2113' }))],
    ['DeadlineExceededError', new DeadlineExceededError(serviceError(status.DEADLINE_EXCEEDED))],
    ['CancelledError', new CancelledError(serviceError(status.CANCELLED))],
    ['TimeoutError', new TimeoutError()],
    ['our read deadline', new EsdbReadDeadlineError('reading order-1', 10_000)],
    ['an unconverted gRPC UNAVAILABLE', serviceError(status.UNAVAILABLE)],
    ['a cluster with no node found', new Error('Failed to discover after 10 attempts.')],
  ])('%s is an outage', (_, error) => expect(isEventStoreUnavailable(error)).toBe(true));

  it.each([
    ['WrongExpectedVersionError', new WrongExpectedVersionError(undefined, { streamName: 'order-1', expected: 'no_stream', current: 3n })],
    ['AccessDeniedError', new AccessDeniedError(serviceError(status.PERMISSION_DENIED))],
    ['StreamDeletedError', new StreamDeletedError(serviceError(status.FAILED_PRECONDITION, { 'stream-name': 'order-1' }))],
    ['UnknownError', new UnknownError(serviceError(status.UNKNOWN))],
    ['an unconverted gRPC INVALID_ARGUMENT', serviceError(status.INVALID_ARGUMENT)],
    ['a Postgres outage', Object.assign(new Error('terminating connection'), { code: '57P01' })],
    ['a plain error', new Error('boom')],
    ['undefined', undefined],
    ['a number', 14],
  ])('%s is not', (_, error) => expect(isEventStoreUnavailable(error)).toBe(false));
});

describe('logFailure', () => {
  it('logs an EventStoreDB outage as one warning without a stack, and a fault with its stack', () => {
    const logger = { warn: jest.fn(), error: jest.fn(), log: jest.fn() };
    logFailure(logger, 'projections failed a batch', new UnavailableError(serviceError(status.UNAVAILABLE)));
    expect(logger.warn).toHaveBeenCalledWith('projections failed a batch: EventStoreDB unavailable (14 failed)');
    const fault = new Error('bad payload');
    logFailure(logger, 'append failed', fault);
    expect(logger.error).toHaveBeenCalledWith('append failed', fault.stack);
  });
});

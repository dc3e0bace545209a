import { isDatabaseUnavailable } from './connection';

describe('isDatabaseUnavailable', () => {
  it.each([
    [{ code: '57P01', message: 'terminating connection due to administrator command' }],
    [{ code: '57P03', message: 'the database system is starting up' }],
    [{ code: '53300', message: 'too many connections for database "topup"' }],
    [{ code: '08006', message: 'connection failure' }],
    [{ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' }],
    [{ code: '55000', message: 'database "topup" is not currently accepting connections' }],
    [new Error('Connection terminated unexpectedly')],
    [new Error('Client has encountered a connection error and is not queryable')],
    [new Error('timeout exceeded when trying to connect')],
  ])('%j is an outage', (error) => expect(isDatabaseUnavailable(error)).toBe(true));

  it.each([
    [{ code: '23505', message: 'duplicate key value violates unique constraint' }],
    [{ code: '22P02', message: 'invalid input syntax for type json' }],
    [{ code: '55000', message: 'cannot execute nextval() in a read-only transaction' }],
    [new TypeError("Cannot read properties of undefined (reading 'x')")],
    [undefined],
    ['Connection terminated'],
  ])('%j is a fault', (error) => expect(isDatabaseUnavailable(error)).toBe(false));
});

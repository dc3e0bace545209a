import { ipOrCidrProblem } from './validators';

describe('ipOrCidrProblem', () => {
  it.each(['127.0.0.1', '10.0.0.0/8', '0.0.0.0/0', '255.255.255.255/32', '::1', '2001:db8::/32', '::/0', 'fe80::/128', '::ffff:10.0.0.1'])(
    'accepts %s',
    (entry) => expect(ipOrCidrProblem(entry)).toBeUndefined(),
  );

  it.each([
    '10.0.0.0/33',
    '2001:db8::/129',
    '10.0.0.0/-1',
    '10.0.0.0/08',
    '10.0.0.0/',
    '10.0.0.0/8/8',
    '/8',
    '300.1.1.1',
    '010.0.0.1',
    'fe80::1%eth0',
    'localhost',
    ' 10.0.0.1',
    '',
    5,
    null,
  ])('refuses %p', (entry) => expect(ipOrCidrProblem(entry)).toEqual(expect.any(String)));
});

import { ChangeNotifier } from './change-notifier';

/**
 * Appends wake the subscribers of the process's other threads at once, over
 * a channel named after the database, without the database: here every
 * notifier points at a closed port, so no NOTIFY can carry anything.
 */
describe('ChangeNotifier: other threads of the process', () => {
  const unreachable = { host: '127.0.0.1', port: 1, database: 'ledger' };
  const notifiers: ChangeNotifier[] = [];
  const notifier = (connection = unreachable) => {
    const made = new ChangeNotifier(connection, 'es_events');
    notifiers.push(made);
    return made;
  };
  afterEach(async () => {
    jest.restoreAllMocks();
    await Promise.all(notifiers.splice(0).map((n) => n.close()));
  });

  it('an announcement wakes the subscribers of another notifier on the same database at once', async () => {
    const appender = notifier();
    const subscriber = notifier().listen();
    const woken = subscriber.wait(5000);
    const announced = Date.now();
    appender.announce();
    expect(await woken).toBe(true);
    expect(Date.now() - announced).toBeLessThan(1000);
  });

  it('announcements in quick succession wake the other threads once at once and once more at the end of the interval', async () => {
    // The clock stands still, so the second and third fall inside the interval however long
    // the first message takes to arrive on a loaded machine.
    jest.spyOn(Date, 'now').mockReturnValue(Date.now());
    const appender = notifier();
    const subscriber = notifier().listen();
    const notified = jest.spyOn(subscriber, 'notify');
    appender.announce();
    expect(await subscriber.wait(5000)).toBe(true);
    appender.announce();
    appender.announce();
    // The last two are not lost: one wake-up follows them, not two.
    expect(await subscriber.wait(5000)).toBe(true);
    expect(await subscriber.wait(100)).toBe(false);
    expect(notified).toHaveBeenCalledTimes(2);
  });

  it('a closed notifier wakes no other thread, and opens no channel again', async () => {
    const appender = notifier();
    const subscriber = notifier().listen();
    await appender.close();
    const woken = subscriber.wait(300);
    appender.announce();
    expect(await woken).toBe(false);
  });

  it('not those of a notifier on another database', async () => {
    const appender = notifier();
    const elsewhere = notifier({ ...unreachable, database: 'other' }).listen();
    const woken = elsewhere.wait(300);
    appender.announce();
    expect(await woken).toBe(false);
  });
});

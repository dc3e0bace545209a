import { readFileSync } from 'node:fs';

/**
 * Started by npm (`npm start`, `npm run start:prod`), the service runs under
 * `npm` → `sh -c` → `node`. A supervisor that stops the service signals the pid
 * it knows, npm's: npm passes the signal to the shell, the shell dies and the
 * service would live on as an orphan, holding its port and the embedded
 * PostgreSQL's data directory. So the service watches the processes that
 * launched it and stops (as on SIGTERM) when either goes: the shell, or npm
 * above it (npm killed with SIGKILL leaves the shell waiting for us).
 *
 * Started any other way (node directly, a container's init, nohup), nothing is
 * watched: there, outliving the parent may be the point.
 */
export function watchLauncher(onGone: (why: string) => void, env: NodeJS.ProcessEnv = process.env, intervalMs = 500): (() => void) | undefined {
  if (!env.npm_lifecycle_event || process.platform === 'win32') return undefined;
  const parent = process.ppid;
  const grandparent = parentOf(parent);
  const timer = setInterval(() => {
    let why: string | undefined;
    if (process.ppid !== parent) why = `the process that started the service (pid ${parent}, under npm ${env.npm_lifecycle_event}) is gone`;
    else if (grandparent !== undefined && parentOf(parent) !== grandparent) why = `npm (pid ${grandparent}), which started the service, is gone`;
    if (why === undefined) return;
    clearInterval(timer);
    onGone(why);
  }, intervalMs);
  // It never keeps the process alive on its own.
  timer.unref();
  return () => clearInterval(timer);
}

/** A process's parent, from /proc (Linux); undefined where there is no /proc or the process is gone. */
export function parentOf(pid: number): number | undefined {
  try {
    // The command name, in parentheses, may hold spaces and parentheses: the fields after the last ')' are fixed.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

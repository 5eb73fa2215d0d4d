/**
 * One process owns an embedded (PGlite) data directory. PGlite is single-process: two processes opening the same
 * files corrupt them. The owner holds `<DATA_DIR>/stacks-pulse.lock`, created with O_EXCL and holding its pid, the
 * command and the start time, for the whole life of the process (removed on close and on exit). A lock whose pid is
 * no longer alive (a crashed or killed process) is stale: it is detected and taken over.
 */
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { PulseError } from '../errors.js';

export const LOCK_FILE = 'stacks-pulse.lock';

export interface LockInfo {
  pid: number;
  command: string;
  started: string;
  /** processIdentity(pid) when the lock was taken (Linux) */
  identity?: string;
}

export class DataDirLockedError extends PulseError {
  readonly holder: LockInfo;
  constructor(dir: string, holder: LockInfo) {
    super(
      `the embedded database in ${dir} is in use by another stacks-pulse process ` +
        `(pid ${holder.pid}, "${holder.command}", since ${holder.started}): ` +
        'stop that process first, or set DATABASE_URL to a PostgreSQL server (which any number of processes can share)',
    );
    this.holder = holder;
  }
}

export interface DataDirLock {
  file: string;
  release(): void;
}

/** true when a process with this pid exists (EPERM: it exists but belongs to someone else). */
export function pidAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Directories whose lock this process holds (a lock file naming our own pid but not in here is stale). */
const held = new Set<string>();

/**
 * Which process `pid` is, beyond its number: the boot id and the start time in clock ticks since boot (/proc, Linux;
 * undefined elsewhere). Pids are reused (pid 1 in a container restarted after a crash, for instance): a lock whose
 * holder's identity differs from the live process with that pid was written by an earlier process.
 */
function processIdentity(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const startTicks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]; // field 22 of proc(5)
    const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return startTicks ? `${bootId}:${startTicks}` : undefined;
  } catch {
    return undefined;
  }
}

/** true when the lock's holder is still the process that wrote it. */
function holderAlive(holder: LockInfo): boolean {
  if (holder.pid === process.pid) return false; // not in `held` (checked by the caller): a previous life of our pid
  if (!pidAlive(holder.pid)) return false;
  const now = processIdentity(holder.pid);
  if (holder.identity && now && now !== holder.identity) return false; // the pid now belongs to another process
  return true;
}

function readLock(file: string): LockInfo | undefined {
  try {
    const info = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockInfo>;
    if (typeof info.pid !== 'number') return undefined;
    return {
      pid: info.pid,
      command: String(info.command ?? '?'),
      started: String(info.started ?? '?'),
      identity: typeof info.identity === 'string' ? info.identity : undefined,
    };
  } catch {
    return undefined;
  }
}

/**
 * Takes the lock of `dataDir` for this process or throws DataDirLockedError naming the live holder. A lock left by
 * a dead process is replaced. A lock file that cannot be read (a holder still writing it) counts as held.
 */
export function acquireDataDirLock(dataDir: string, command = process.argv.slice(2).join(' ') || 'serve'): DataDirLock {
  const dir = path.resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, LOCK_FILE);
  const mine: LockInfo = {
    pid: process.pid,
    command: `stacks-pulse ${command}`,
    started: new Date().toISOString(),
    identity: processIdentity(process.pid),
  };
  for (let attempt = 0; attempt < 5; attempt++) {
    let fd: number;
    try {
      fd = openSync(file, 'wx', 0o644);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = readLock(file);
      if (held.has(file) && holder) throw new DataDirLockedError(dir, holder); // opened twice in this process
      if (holder && holderAlive(holder)) throw new DataDirLockedError(dir, holder);
      if (!holder) {
        // being written right now by another starter, or garbage: give a writer a moment, then treat as stale
        const waited = attempt < 2;
        if (waited) {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
          continue;
        }
      }
      // stale: move it aside atomically (only one taker wins the rename), then retry the exclusive create
      const aside = `${file}.stale-${process.pid}`;
      try {
        renameSync(file, aside);
        unlinkSync(aside);
      } catch {
        /* someone else took it over first: retry */
      }
      continue;
    }
    writeSync(fd, JSON.stringify(mine) + '\n');
    closeSync(fd);
    held.add(file);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      held.delete(file);
      process.off('exit', release);
      const now = readLock(file);
      if (now && now.pid !== process.pid) return; // not ours any more
      try {
        unlinkSync(file);
      } catch {
        /* already gone */
      }
    };
    process.on('exit', release);
    return { file, release };
  }
  const holder = readLock(file);
  throw new DataDirLockedError(dir, holder ?? { pid: 0, command: '?', started: '?' });
}

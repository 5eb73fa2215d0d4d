/**
 * A start-up failure the operator fixes by changing a setting or stopping another process: the CLI prints its
 * message as one line (no stack trace, which goes to the debug log) and exits non-zero.
 */
import { isUnavailable } from './http/errors.js';

export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
  }
}

/** postgres://user:***@host:port/db (the password never reaches a message). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}

const codeOf = (err: unknown): string | undefined => {
  const c = (err as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
};

/** A database error at start-up as a StartupError naming DATABASE_URL; anything else unchanged. */
export function databaseStartupError(err: unknown, databaseUrl: string | undefined): unknown {
  if (err instanceof StartupError || !databaseUrl) return err;
  const code = codeOf(err);
  const setting = `DATABASE_URL=${redactUrl(databaseUrl)}`;
  if (isUnavailable(err)) {
    return new StartupError(`${setting} is unreachable (${code}): start PostgreSQL there or set DATABASE_URL to a reachable server`, { cause: err });
  }
  if (code === '28P01' || code === '28000') {
    return new StartupError(`${setting}: authentication failed (${(err as Error).message}): fix the user or password in DATABASE_URL`, { cause: err });
  }
  if (code === '3D000') {
    return new StartupError(`${setting}: ${(err as Error).message}: create the database or set DATABASE_URL to an existing one`, { cause: err });
  }
  return err;
}

/** A file-system error on DATA_DIR as a StartupError naming it; anything else unchanged. */
export function dataDirStartupError(err: unknown, dataDir: string): unknown {
  if (err instanceof StartupError) return err;
  const code = codeOf(err);
  if (code && ['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EEXIST', 'ENOSPC', 'ENOENT'].includes(code)) {
    return new StartupError(
      `DATA_DIR=${dataDir} is not writable (${code}): set DATA_DIR to a writable directory (or set DATABASE_URL to use PostgreSQL)`,
      { cause: err },
    );
  }
  return err;
}

/** A port that could not be bound as a StartupError naming the setting. */
export function portStartupError(variable: 'API_PORT' | 'OBSERVER_PORT' | 'METRICS_PORT', hostVariable: string, host: string, port: number, err: unknown): StartupError {
  return new StartupError(
    `${variable}=${port} is in use (or ${hostVariable}=${host} is not an address of this machine): set ${variable} to a free port`,
    { cause: err },
  );
}

import { PulseError } from './errors.js';

/**
 * A start-up failure the operator fixes by changing a setting or stopping another process: the CLI prints its
 * message as one line (no stack trace, which goes to the debug log) and exits non-zero.
 */
export class StartupError extends PulseError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
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

export const codeOf = (err: unknown): string | undefined => {
  const c = (err as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
};

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

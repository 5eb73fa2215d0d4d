// pino JSON logs. API keys never reach the log: see REDACT_PATHS.
import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

export const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'headers["x-api-key"]',
  'apiKey',
  '*.apiKey',
];

/** A pino logger at `level`; `destination` (default: stdout) lets tests capture the lines. */
export function createLogger(level: LevelWithSilent = 'info', destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { pid: process.pid },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * Process-wide logger at `info`. config.ts is the only reader of the environment, so main sets
 * `logger.level = config.logLevel` once the configuration is loaded.
 */
export const logger: Logger = createLogger('info');

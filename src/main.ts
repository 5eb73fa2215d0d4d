/**
 * stacks-pulse CLI: `stacks-pulse --help` lists the commands (src/cli.ts holds them, their options and help texts).
 *   serve (default) | api | ingest   the service (API_MODE decides which parts)
 *   migrate | import-events | export-events | keys ...   database commands
 *   replay --file F [--url U]        POST a recorded stream to a running observer, as a node does
 */
import { loadConfig, ConfigError, type Config } from './config.js';
import type { Logger } from 'pino';
import { createLogger } from './logger.js';
import { textDestination, textLogs } from './log-format.js';
import { startService } from './service.js';
import { connectDatabase, databaseStartupError } from './store/connect.js';
import { migrate } from './store/migrate.js';
import { deferredIndexCount } from './store/bulk-indexes.js';
import { completeBnsBackfill } from './store/bns-write.js';
import { importBns } from './store/bns-import.js';
import { ObserverPipeline } from './observer/pipeline.js';
import { exportEvents, importEvents, ImportInterrupted, IMPORT_PROJECTOR } from './replay.js';
import { createDecoder, defaultDecodeThreads } from './observer/decode-pool.js';
import { runKeysCommand } from './auth/cli.js';
import { StartupError } from './startup-error.js';
import { errorPrefix, parseCommandLine } from './cli.js';
import { runDemoCommand } from './demo-command.js';
import { DEFAULT_OBSERVER_URL, ObserverRejected } from './observer-client.js';
import { replayToUrl, replaySummary } from './replay-http.js';
import { packageVersion, serviceUrls } from './service.js';
import { DataDirLockedError } from './store/data-lock.js';
import { settleNetwork } from './store/network.js';
import { recoverFromDriverFault } from './store/faults.js';
import { InputError, requireDir, requireFile, requireParentDir } from './input-checks.js';

/** set once the configuration is read: start-up failures go there at debug level, with their stack */
let debugLog: Logger | undefined;
/** the command running, for the prefix of error lines */
let currentCommand: string | undefined;

async function main(argv: string[]): Promise<void> {
  const parsed = parseCommandLine(argv, packageVersion());
  if (parsed.kind !== 'run') {
    (parsed.code === 0 ? process.stdout : process.stderr).write(parsed.text);
    process.exit(parsed.code);
  }
  const { command, options } = parsed;
  currentCommand = command;
  if (command === 'demo') {
    process.exitCode = await runDemoCommand(options);
    return;
  }
  if (command === 'replay') {
    const url = options.url ?? DEFAULT_OBSERVER_URL;
    const giveUp = options['give-up-after'];
    try {
      requireFile('--file', options.file);
    } catch (err) {
      process.stderr.write(`${errorPrefix('replay')}${(err as Error).message}\n`);
      process.exit(1);
    }
    const abort = new AbortController();
    const onSignal = () => abort.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    let stats;
    try {
      stats = await replayToUrl({
        file: options.file,
        url,
        tty: process.stderr.isTTY,
        giveUpAfterMs: giveUp === undefined ? undefined : Number(giveUp) * 1000,
        signal: abort.signal,
      });
    } catch (err) {
      if (!(err instanceof ObserverRejected) && (err as { code?: string }).code !== 'ENOENT') throw err;
      process.stderr.write(`${errorPrefix('replay')}${(err as Error).message}\n`);
      process.exit(1);
    }
    process.stderr.write(replaySummary(stats, url) + '\n');
    process.exitCode = stats.complete ? 0 : 130;
    return;
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${errorPrefix(command)}configuration: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  // text lines on a terminal, JSON lines for machines (LOG_FORMAT)
  const text = textLogs(config.logFormat);
  const log: Logger = text ? createLogger(config.logLevel, textDestination(() => log.isLevelEnabled('debug'))) : createLogger(config.logLevel);
  debugLog = log;
  switch (command) {
    case 'serve':
    case 'api':
    case 'ingest': {
      if (command !== 'serve') config = { ...config, apiMode: command as 'api' | 'ingest' };
      const service = await startService(config, log);
      const urls = serviceUrls(config, service);
      if (text) {
        // the banner, once: what to open, where the data lives, how to stop
        const rows: [string, string | undefined, string][] = [
          ['dashboard', urls.dashboard, ''],
          ['API', urls.api, ''],
          ['docs', urls.docs, ''],
          ['observer', urls.observer, '  (a Stacks node POSTs its events here; try: npx stacks-pulse demo)'],
        ];
        process.stdout.write(
          `stacks-pulse ${packageVersion()} ready (${config.apiMode === 'all' ? 'observer + API' : config.apiMode}, database: ${service.db.kind === 'pglite' ? `embedded, in ${config.dataDir}` : 'PostgreSQL'})\n` +
            rows.filter((r) => r[1]).map(([k, v, note]) => `  ${k.padEnd(10)} ${v}${note}\n`).join('') +
            'Ctrl-C stops it.\n',
        );
      } else {
        log.info({ ...urls, database: service.db.kind === 'pglite' ? `embedded, in ${config.dataDir}` : 'PostgreSQL' }, 'stacks-pulse ready');
      }
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        log.info({ signal }, 'shutting down');
        const timer = setTimeout(() => process.exit(1), 10_000);
        timer.unref();
        try {
          await service.close();
        } catch (err) {
          log.warn({ err }, 'shutdown did not complete cleanly');
          process.exit(1);
        }
        log.info('stopped');
        process.exit(0);
      };
      // postgres.js losing a connection where no caller can catch it (porsager/postgres#1208) is logged and recovered
      // from (src/store/faults.ts: fresh pools; the projector retries, the node re-sends what got a 503). Anything
      // else uncaught is a bug: log it and exit non-zero so the supervisor restarts a clean process.
      process.on('uncaughtException', (err, origin) => {
        if (recoverFromDriverFault(err, origin, log)) return;
        log.fatal({ err }, 'uncaught exception: exiting');
        process.exit(1);
      });
      process.on('SIGTERM', () => void stop('SIGTERM'));
      process.on('SIGINT', () => void stop('SIGINT'));
      return;
    }
    case 'migrate': {
      const db = await connectDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, command });
      const applied = await migrate(db.sql, undefined, { log }).catch((e: unknown) => {
        throw databaseStartupError(e, config.databaseUrl);
      });
      await completeBnsBackfill(db.sql);
      log.info({ migrations: applied.length }, applied.length ? 'migrations applied' : 'database is up to date');
      if (applied.length) log.debug({ applied }, 'migrations applied (names)');
      await db.close();
      return;
    }
    case 'import-bns': {
      const dir = options.dir;
      requireDir('--dir', dir, ['chainstate.txt', 'name_zonefiles.txt']);
      const db = await connectDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, command });
      try {
        await migrate(db.sql, undefined, { log });
        const tty = process.stderr.isTTY;
        let last = 0;
        const r = await importBns(db.sql, dir, (part, rows, fraction) => {
          const now = Date.now();
          if (fraction < 1 && now - last < (tty ? 200 : 5000)) return;
          last = now;
          if (!tty) return log.info({ part, rows, progress: `${(fraction * 100).toFixed(1)}%` }, 'BNS import progress');
          const filled = Math.round(Math.min(1, fraction) * 30);
          process.stderr.write(`\r${part} [${'#'.repeat(filled)}${'.'.repeat(30 - filled)}] ${(fraction * 100).toFixed(1)}% ${rows} rows   `);
          if (fraction >= 1) process.stderr.write('\n');
        });
        log.info(r, 'BNS import done');
      } finally {
        await db.close();
      }
      return;
    }
    case 'import-events': {
      const file = options.file;
      const deferMode = options['defer-indexes'] ?? 'auto';
      requireFile('--file', file);
      const db = await connectDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, command });
      try {
        // indexes an interrupted import left deferred: importEvents decides whether they stay so
        await migrate(db.sql, undefined, { log, keepDeferredIndexes: true }).catch((e: unknown) => {
          throw databaseStartupError(e, config.databaseUrl);
        });
        const chainId = await settleNetwork(db.sql, config.chainId);
        const pipelineLog = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
        // parsing, validation and transaction decoding run in worker threads, ahead of the database
        const decoder = createDecoder(config.decodeThreads ?? defaultDecodeThreads(), { log: pipelineLog });
        const pipeline = new ObserverPipeline(db.sql, pipelineLog, { chainId, decoder, projector: IMPORT_PROJECTOR });
        log.info({ decode_threads: decoder.threads }, decoder.threads ? 'import: decoding in worker threads' : 'import: decoding in the main thread');
        // Ctrl-C: stop after the chunk in flight (logged), then say so; what is logged is applied by the next run.
        const abort = new AbortController();
        const onSignal = () => abort.abort();
        process.once('SIGINT', onSignal);
        process.once('SIGTERM', onSignal);
        try {
          const stats = await importEvents(file, pipeline, log, {
            tty: process.stderr.isTTY,
            signal: abort.signal,
            deferIndexes: deferMode as 'auto' | 'on' | 'off',
            // a PostgreSQL server's settings are the operator's to change (the embedded database's are not)
            server: db.kind === 'postgres',
          });
          log.info(
            {
              messages: stats.messages,
              ms: stats.ms,
              logged_ms: stats.loggedMs,
              rate: Math.round(stats.messages / (stats.ms / 1000)),
              ...(stats.deferredIndexes !== undefined ? { deferred_indexes: stats.deferredIndexes, index_ms: stats.indexMs } : {}),
              analyze_ms: stats.analyzeMs,
              total_ms: stats.ms + (stats.indexMs ?? 0) + (stats.analyzeMs ?? 0),
            },
            'import done',
          );
        } catch (err) {
          if (!(err instanceof ImportInterrupted)) throw err;
          process.stderr.write(
            `stacks-pulse: import interrupted: the first ${err.stats.lastLine} lines of ${file} (${err.stats.messages} messages) are logged; ` +
              'run the same command again to continue (messages already logged are skipped, no duplicates; the rest of the log is applied then, or by the service)\n',
          );
          const deferred = await deferredIndexCount(db.sql).catch(() => 0);
          if (deferred) {
            process.stderr.write(
              `stacks-pulse: ${deferred} API-only indexes are still deferred: the re-run builds them when it ends (or the next start-up does)\n`,
            );
          }
          process.exitCode = 130;
        } finally {
          await pipeline.stop();
          await decoder.close();
        }
      } finally {
        await db.close();
      }
      return;
    }
    case 'export-events': {
      const file = options.file;
      requireParentDir('--file', file);
      const db = await connectDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, command });
      try {
        const n = await exportEvents(db.sql, file);
        log.info({ messages: n, file }, 'export done');
      } finally {
        await db.close();
      }
      return;
    }
    case 'keys create':
    case 'keys list':
    case 'keys revoke': {
      const args = [command.slice(5), ...parsed.positionals];
      if (options.name !== undefined) args.push('--name', options.name);
      if (options.rpm !== undefined) args.push('--rpm', options.rpm);
      const db = await connectDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, command });
      let code: number;
      try {
        await migrate(db.sql).catch((e: unknown) => {
          throw databaseStartupError(e, config.databaseUrl);
        });
        code = await runKeysCommand(db.sql, args, config.rateLimitKeyRpm, {
          out: (s) => process.stdout.write(s),
          err: (s) => process.stderr.write(s),
          errorPrefix: (sub) => errorPrefix(`keys ${sub}`),
        });
      } finally {
        await db.close();
      }
      process.exitCode = code;
      return;
    }
    default:
      throw new Error(`unhandled command ${command}`);
  }
}

main(process.argv.slice(2)).catch((err) => {
  // One line naming what to change; the stack trace only in the debug log.
  const known = err instanceof StartupError || err instanceof DataDirLockedError || err instanceof InputError;
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`${errorPrefix(currentCommand)}${message}${known || debugLog?.isLevelEnabled('debug') ? '' : ' (LOG_LEVEL=debug shows the stack trace)'}\n`);
  debugLog?.debug({ err }, 'stopped by an error');
  process.exit(1);
});

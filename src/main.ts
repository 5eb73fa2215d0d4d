#!/usr/bin/env node
/**
 * stacks-pulse CLI.
 *   serve (default)          observer + REST API (API_MODE decides which)
 *   migrate                  apply sql/ migrations and exit
 *   import-events --file F   replay a node event TSV through the ingest pipeline
 *   export-events --file F   write the raw event log as TSV
 *   import-bns --dir D       BNS genesis (Stacks 1.0) names, namespaces and subdomains (src/store/bns-import.ts)
 *   keys create --name N [--rpm N] | keys list | keys revoke NAME   API keys (src/auth/cli.ts)
 */
import { loadConfig, ConfigError, type Config } from './config.js';
import { createLogger } from './logger.js';
import { startService } from './service.js';
import { connectDatabase } from './store/connect.js';
import { migrate } from './store/migrate.js';
import { completeBnsBackfill } from './store/bns-write.js';
import { importBns } from './store/bns-import.js';
import { ObserverPipeline } from './observer/pipeline.js';
import { exportEvents, importEvents } from './replay.js';
import { runKeysCommand } from './auth/cli.js';

function argValue(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i >= 0) return args[i + 1];
  const eq = args.find((a) => a.startsWith(name + '='));
  return eq?.slice(name.length + 1);
}

function usage(): never {
  process.stderr.write(
    'usage: stacks-pulse [serve|migrate|import-events --file F|export-events --file F|import-bns --dir D|keys create --name N [--rpm N]|keys list|keys revoke NAME]\n',
  );
  process.exit(2);
}

async function main(argv: string[]): Promise<void> {
  const [command = 'serve', ...args] = argv;
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  switch (command) {
    case 'serve':
    case 'api':
    case 'ingest': {
      if (command !== 'serve') config = { ...config, apiMode: command };
      const service = await startService(config, log);
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        log.info({ signal }, 'shutting down');
        const timer = setTimeout(() => process.exit(1), 10_000);
        timer.unref();
        await service.close();
        process.exit(0);
      };
      // A fault nothing can recover from in-process (e.g. postgres.js 3.4.9 writing to a connection PostgreSQL just
      // closed, porsager/postgres#1208): log it and exit non-zero so the supervisor restarts a clean process; the
      // node re-sends whatever was not acknowledged.
      process.on('uncaughtException', (err) => {
        log.fatal({ err }, 'uncaught exception: exiting');
        process.exit(1);
      });
      process.on('SIGTERM', () => void stop('SIGTERM'));
      process.on('SIGINT', () => void stop('SIGINT'));
      return;
    }
    case 'migrate': {
      const db = await connectDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
      const applied = await migrate(db.sql);
      await completeBnsBackfill(db.sql);
      log.info({ applied }, applied.length ? 'migrations applied' : 'database is up to date');
      await db.close();
      return;
    }
    case 'import-bns': {
      const dir = argValue(args, '--dir') ?? usage();
      const db = await connectDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
      try {
        await migrate(db.sql);
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
      const file = argValue(args, '--file') ?? usage();
      const db = await connectDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
      try {
        await migrate(db.sql);
        const pipeline = new ObserverPipeline(db.sql, createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel));
        const stats = await importEvents(file, pipeline, log, { tty: process.stderr.isTTY });
        log.info({ messages: stats.messages, ms: stats.ms, rate: Math.round(stats.messages / (stats.ms / 1000)) }, 'import done');
      } finally {
        await db.close();
      }
      return;
    }
    case 'export-events': {
      const file = argValue(args, '--file') ?? usage();
      const db = await connectDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
      try {
        const n = await exportEvents(db.sql, file);
        log.info({ messages: n, file }, 'export done');
      } finally {
        await db.close();
      }
      return;
    }
    case 'keys': {
      const db = await connectDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
      let code: number;
      try {
        await migrate(db.sql);
        code = await runKeysCommand(db.sql, args, config.rateLimitKeyRpm, {
          out: (s) => process.stdout.write(s),
          err: (s) => process.stderr.write(s),
        });
      } finally {
        await db.close();
      }
      process.exitCode = code;
      return;
    }
    default:
      usage();
  }
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`stacks-pulse: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

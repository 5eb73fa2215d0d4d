import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, ConfigError, loadConfig, parseByteSize } from '../src/config.js';

const MB = 1024 * 1024;

function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be rejected`);
}

describe('loadConfig', () => {
  it('has defaults for everything', () => {
    expect(loadConfig({})).toEqual({
      apiHost: '0.0.0.0',
      apiPort: 3999,
      observerHost: '127.0.0.1',
      observerPort: 3700,
      databaseUrl: undefined,
      databaseReadUrl: undefined,
      dataDir: './data',
      redisUrl: undefined,
      chainId: undefined,
      network: undefined,
      apiMode: 'all',
      logLevel: 'info',
      observerBodyLimit: 500 * MB,
      stacksNodeRpcUrls: [],
      proxyBodyLimit: 2 * MB,
      rateLimitAnonRpm: 50,
      rateLimitKeyRpm: 500,
      rateLimitExempt: ['127.0.0.0/8', '::1/128'],
      trustProxy: false,
      socketPingIntervalMs: 5000,
      socketPingTimeoutMs: 5000,
      redisKeyPrefix: 'stacks-pulse',
      pushRedisAdapter: 'classic',
      pushMaxBuffer: 8 * MB,
      pushRooms: 'subscribed',
      pushResumeWindowMs: 900_000,
      replicaMaxLagMs: 10_000,
      replicaPollMs: 10,
      replicaMaxHeldMessages: 10_000,
      pushStartWaitMs: 10_000,
      hooksMaxPerKey: 100,
      hooksMaxPayloadBytes: 4 * MB,
      hooksTimeoutMs: 10_000,
      hooksAllowedHosts: [],
      hooksRetryMinMs: 1000,
      hooksRetryMaxMs: 600_000,
      hooksConcurrency: 32,
      metricsPort: undefined,
      metricsHost: '127.0.0.1',
      decodeThreads: undefined,
      logFormat: 'auto',
    });
  });

  it('treats empty strings as unset', () => {
    const env = Object.fromEntries(CONFIG_VARIABLES.map((k) => [k, '']));
    expect(loadConfig(env)).toEqual(loadConfig({}));
  });

  it('reads every variable', () => {
    const c = loadConfig({
      API_HOST: '127.0.0.1',
      API_PORT: '0',
      OBSERVER_HOST: '::',
      OBSERVER_PORT: '65535',
      DATABASE_URL: 'postgres://u:p@db:5432/stacks',
      DATABASE_READ_URL: 'postgresql://u:p@replica/stacks',
      DATA_DIR: '/var/lib/pulse',
      REDIS_URL: 'redis://cache:6379/0',
      STACKS_CHAIN_ID: 'testnet',
      API_MODE: 'ingest',
      LOG_LEVEL: 'debug',
      OBSERVER_BODY_LIMIT: '2MB',
      STACKS_NODE_RPC_URLS: 'http://node-a:20443/, https://node-b:20443',
      PROXY_BODY_LIMIT: '4096',
      RATE_LIMIT_ANON_RPM: '0',
      RATE_LIMIT_KEY_RPM: '10000',
      RATE_LIMIT_EXEMPT: '127.0.0.1/8, 10.0.0.0/8,::1/128,192.168.1.7',
      TRUST_PROXY: '2',
      SOCKET_PING_INTERVAL_MS: '25000',
      SOCKET_PING_TIMEOUT_MS: '20000',
      REDIS_KEY_PREFIX: 'pulse-test:1',
      PUSH_REDIS_ADAPTER: 'sharded',
      PUSH_MAX_BUFFER: '256kb',
      PUSH_ROOMS: 'all',
      PUSH_RESUME_WINDOW_S: '60',
      REPLICA_MAX_LAG_MS: '2500',
      REPLICA_POLL_MS: '25',
      REPLICA_MAX_HELD_MESSAGES: '500',
      PUSH_START_WAIT_MS: '45000',
      HOOKS_MAX_PER_KEY: '5',
      HOOKS_MAX_PAYLOAD_BYTES: '64kb',
      HOOKS_TIMEOUT_MS: '2000',
      HOOKS_ALLOWED_HOSTS: 'hooks.example.com, *.internal,127.0.0.1',
      HOOKS_RETRY_MIN_MS: '50',
      HOOKS_RETRY_MAX_MS: '5000',
      HOOKS_CONCURRENCY: '4',
      DECODE_THREADS: '3',
      METRICS_PORT: '9464',
      METRICS_HOST: '0.0.0.0',
      STACKS_FIXTURES_DIR: '/not/config',
    });
    expect(c).toEqual({
      apiHost: '127.0.0.1',
      apiPort: 0,
      observerHost: '::',
      observerPort: 65535,
      databaseUrl: 'postgres://u:p@db:5432/stacks',
      databaseReadUrl: 'postgresql://u:p@replica/stacks',
      dataDir: '/var/lib/pulse',
      redisUrl: 'redis://cache:6379/0',
      chainId: 0x80000000,
      network: 'testnet',
      apiMode: 'ingest',
      logLevel: 'debug',
      observerBodyLimit: 2 * MB,
      stacksNodeRpcUrls: ['http://node-a:20443', 'https://node-b:20443'],
      proxyBodyLimit: 4096,
      rateLimitAnonRpm: 0,
      rateLimitKeyRpm: 10000,
      rateLimitExempt: ['127.0.0.1/8', '10.0.0.0/8', '::1/128', '192.168.1.7'],
      trustProxy: 2,
      socketPingIntervalMs: 25000,
      socketPingTimeoutMs: 20000,
      redisKeyPrefix: 'pulse-test:1',
      pushRedisAdapter: 'sharded',
      pushMaxBuffer: 256 * 1024,
      pushRooms: 'all',
      pushResumeWindowMs: 60_000,
      replicaMaxLagMs: 2500,
      replicaPollMs: 25,
      replicaMaxHeldMessages: 500,
      pushStartWaitMs: 45_000,
      hooksMaxPerKey: 5,
      hooksMaxPayloadBytes: 64 * 1024,
      hooksTimeoutMs: 2000,
      hooksAllowedHosts: ['hooks.example.com', '*.internal', '127.0.0.1'],
      hooksRetryMinMs: 50,
      hooksRetryMaxMs: 5000,
      hooksConcurrency: 4,
      decodeThreads: 3,
      logFormat: 'auto',
      metricsPort: 9464,
      metricsHost: '0.0.0.0',
    });
    expect(c).not.toHaveProperty('stacksFixturesDir');
  });

  it('accepts the chain id in every documented form', () => {
    expect(loadConfig({ STACKS_CHAIN_ID: '0x80000000' }).chainId).toBe(0x80000000);
    expect(loadConfig({ STACKS_CHAIN_ID: '0x00000001' })).toMatchObject({ chainId: 1, network: 'mainnet' });
    expect(loadConfig({ STACKS_CHAIN_ID: 'MAINNET' }).chainId).toBe(1);
    expect(loadConfig({ STACKS_CHAIN_ID: '2147483648' }).network).toBe('testnet');
  });

  it('parses byte sizes', () => {
    expect(parseByteSize('500mb')).toBe(500 * MB);
    expect(parseByteSize('2MB')).toBe(2 * MB);
    expect(parseByteSize('64 kb')).toBe(64 * 1024);
    expect(parseByteSize('1gb')).toBe(1024 * MB);
    expect(parseByteSize('1.5k')).toBe(1536);
    expect(parseByteSize('123')).toBe(123);
    expect(parseByteSize('10b')).toBe(10);
    for (const bad of ['', 'mb', '-1', '0', '5 tb', '1e6', 'abc']) expect(parseByteSize(bad)).toBeUndefined();
  });

  it('reads TRUST_PROXY as a boolean or a hop count', () => {
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
  });

  it('exempts loopback from rate limits by default; RATE_LIMIT_EXEMPT=none exempts nobody', () => {
    expect(loadConfig({}).rateLimitExempt).toEqual(['127.0.0.0/8', '::1/128']);
    expect(loadConfig({ RATE_LIMIT_EXEMPT: 'none' }).rateLimitExempt).toEqual([]);
    expect(loadConfig({ RATE_LIMIT_EXEMPT: ' NONE ' }).rateLimitExempt).toEqual([]);
    expect(loadConfig({ RATE_LIMIT_EXEMPT: '10.0.0.0/8' }).rateLimitExempt).toEqual(['10.0.0.0/8']);
  });

  const badValues: [string, string, RegExp][] = [
    ['API_PORT', 'abc', /^API_PORT: expected integer 0-65535, got "abc"$/],
    ['API_PORT', '65536', /^API_PORT: expected integer 0-65535, got "65536"$/],
    ['API_PORT', '-1', /^API_PORT: expected integer/],
    ['API_PORT', '3.5', /^API_PORT: expected integer/],
    ['OBSERVER_PORT', '80x', /^OBSERVER_PORT: expected integer 0-65535, got "80x"$/],
    ['API_HOST', 'not a host', /^API_HOST: expected host name or IP address/],
    ['OBSERVER_HOST', 'a/b', /^OBSERVER_HOST: /],
    ['DATABASE_URL', 'mysql://x/y', /^DATABASE_URL: expected postgres:\/\/ or postgresql:\/\/ URL, got "mysql:\/\/x\/y"$/],
    ['DATABASE_URL', 'nonsense', /^DATABASE_URL: /],
    ['DATABASE_READ_URL', 'http://x', /^DATABASE_READ_URL: /],
    ['REDIS_URL', 'localhost:6379', /^REDIS_URL: expected redis:\/\/ or rediss:\/\/ URL/],
    ['STACKS_CHAIN_ID', '0x12345678', /^STACKS_CHAIN_ID: expected 0x00000001, 0x80000000, mainnet or testnet, got "0x12345678"$/],
    ['STACKS_CHAIN_ID', 'devnet', /^STACKS_CHAIN_ID: /],
    ['RATE_LIMIT_EXEMPT', '10.0.0.0/33', /^RATE_LIMIT_EXEMPT: expected comma-separated IP networks/],
    ['RATE_LIMIT_EXEMPT', 'localhost', /^RATE_LIMIT_EXEMPT: /],
    ['API_MODE', 'both', /^API_MODE: expected one of all, api, ingest, got "both"$/],
    ['LOG_LEVEL', 'verbose', /^LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "verbose"$/],
    ['OBSERVER_BODY_LIMIT', 'huge', /^OBSERVER_BODY_LIMIT: expected positive size in bytes/],
    ['OBSERVER_BODY_LIMIT', '0', /^OBSERVER_BODY_LIMIT: /],
    ['PROXY_BODY_LIMIT', '2 parsecs', /^PROXY_BODY_LIMIT: /],
    ['STACKS_NODE_RPC_URLS', 'http://ok:20443,ftp://bad', /^STACKS_NODE_RPC_URLS: expected comma-separated list of http\(s\) URLs/],
    ['RATE_LIMIT_ANON_RPM', 'many', /^RATE_LIMIT_ANON_RPM: expected non-negative integer, got "many"$/],
    ['RATE_LIMIT_KEY_RPM', '-5', /^RATE_LIMIT_KEY_RPM: /],
    ['TRUST_PROXY', 'maybe', /^TRUST_PROXY: expected true, false or a number of proxy hops/],
    ['SOCKET_PING_INTERVAL_MS', '0', /^SOCKET_PING_INTERVAL_MS: expected positive integer/],
    ['SOCKET_PING_TIMEOUT_MS', 'soon', /^SOCKET_PING_TIMEOUT_MS: /],
    ['PUSH_ROOMS', 'some', /^PUSH_ROOMS: expected one of subscribed, all, got "some"$/],
    ['PUSH_RESUME_WINDOW_S', '-1', /^PUSH_RESUME_WINDOW_S: expected integer 0-604800/],
    ['DECODE_THREADS', 'all', /^DECODE_THREADS: expected integer 0-64, got "all"$/],
  ];
  it.each(badValues)('names %s when its value %j is bad', (name, value, pattern) => {
    const err = errorOf({ [name]: value });
    expect(err.message).toMatch(pattern);
    expect(err.issues).toEqual([{ variable: name, message: expect.stringContaining(JSON.stringify(value)) }]);
  });

  it('reports every bad variable at once', () => {
    const err = errorOf({ API_PORT: 'x', LOG_LEVEL: 'loud', API_HOST: '0.0.0.0' });
    expect(err.issues.map((i) => i.variable).sort()).toEqual(['API_PORT', 'LOG_LEVEL']);
    expect(err.message).toContain('API_PORT: ');
    expect(err.message).toContain('; LOG_LEVEL: ');
  });

  it('reads process.env by default', () => {
    const saved = process.env.API_PORT;
    process.env.API_PORT = '4123';
    try {
      expect(loadConfig().apiPort).toBe(4123);
    } finally {
      if (saved === undefined) delete process.env.API_PORT;
      else process.env.API_PORT = saved;
    }
  });
});

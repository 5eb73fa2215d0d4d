/** Blocks as the REST API prints them (src/views/blocks.ts) and the chain status (routes/status.ts). */
import { z } from 'zod';
import { Count, Hash, Height, IsoTime, TxId, UnixTime, component } from './common.js';

const blockHead = {
  canonical: z.boolean(),
  height: Height,
  hash: Hash,
  block_time: UnixTime,
  block_time_iso: IsoTime,
  tenure_height: z.int().describe('the height of the tenure (pre-Nakamoto: the block height; -1 for a block whose tenure the node did not report)'),
  index_block_hash: Hash,
  parent_block_hash: Hash,
};

const burn = {
  burn_block_time: UnixTime,
  burn_block_time_iso: IsoTime,
  burn_block_hash: Hash,
  burn_block_height: Height,
  miner_txid: Hash,
};

const costs = {
  execution_cost_read_count: Count,
  execution_cost_read_length: Count,
  execution_cost_runtime: Count,
  execution_cost_write_count: Count,
  execution_cost_write_length: Count,
};

export const Block = component(
  'Block',
  z
    .object({ ...blockHead, parent_index_block_hash: Hash, ...burn, tx_count: Count, ...costs })
    .describe('A block (the /extended/v2 form)'),
);

export const LegacyBlock = component(
  'LegacyBlock',
  z
    .object({
      ...blockHead,
      ...burn,
      ...costs,
      txs: z.array(TxId).describe('ids of the canonical transactions of the block'),
      parent_microblock_hash: z
        .string()
        .regex(/^(0x([0-9a-f]{64})?)?$/)
        .describe("'' or '0x' when the parent block streamed no microblock the block confirms"),
      parent_microblock_sequence: z.int(),
      microblocks_accepted: z.array(Hash),
      microblocks_streamed: z.array(Hash),
      microblock_tx_count: z.record(z.string(), Count).describe('transaction count per accepted microblock hash'),
    })
    .describe('A block (the legacy /extended/v1 form)'),
);

export const BlockListResponse = component(
  'BlockList',
  z.object({
    limit: Count,
    offset: z.int(),
    total: Count,
    next_cursor: Hash.nullable().describe('index block hash of the page `limit` blocks newer'),
    prev_cursor: Hash.nullable().describe('index block hash of the page `limit` blocks older'),
    cursor: Hash.nullable().describe('index block hash of the first block of this page'),
    results: z.array(Block),
  }),
);

export const LegacyBlockListResponse = component(
  'LegacyBlockList',
  z.object({ limit: Count, offset: Count, total: Count, results: z.array(LegacyBlock) }),
);

export const StatusResponse = component(
  'ServerStatus',
  z.object({
    server_version: z.string(),
    status: z.string().describe('`ready`'),
    pox_v1_unlock_height: Height.nullable(),
    pox_v2_unlock_height: Height.nullable(),
    pox_v3_unlock_height: Height.nullable(),
    chain_tip: z
      .object({
        block_height: Height,
        block_hash: Hash,
        index_block_hash: Hash,
        microblock_hash: Hash.optional().describe('the newest microblock built on the tip, if any'),
        microblock_sequence: Count.optional(),
        burn_block_height: Height,
      })
      .optional()
      .describe('absent while the database holds no block'),
  }),
);

export type BlockJson = z.infer<typeof Block>;
export type LegacyBlockJson = z.infer<typeof LegacyBlock>;
export type ServerStatus = z.infer<typeof StatusResponse>;

export const PushStatusResponse = component(
  'PushStatus',
  z.object({
    socket_connections: z.number().int(),
    rpc_connections: z.number().int(),
    messages_delivered: z.number().int().describe('messages this process received for delivery'),
    last_cursor: z.string().describe('newest message cursor this process delivered'),
    slow_consumer_disconnects: z.number().int().describe('clients disconnected for passing max_buffered_bytes unsent'),
    max_buffered_bytes: z.number().int(),
    connections_refused: z.number().int().describe('connections refused by rate limits or an invalid API key'),
    resumes: z.number().int().describe('reconnections with a cursor'),
    messages_replayed: z.number().int().describe('messages replayed from PostgreSQL to resuming clients'),
    forced_resyncs: z.number().int().describe('times every client was made to resume (Redis subscription interrupted, or a gap in the push channel)'),
    redis_adapter: z.enum(['classic', 'sharded']).nullable(),
  }),
);

export const IngestStatusResponse = component(
  'IngestStatus',
  z.object({
    state: z.enum(['caught_up', 'applying', 'failed']),
    acknowledged_id: z.int().min(0).describe('newest message acknowledged to the node (appended to the log)'),
    applied_id: z.int().min(0).describe('last message applied to the tables REST and push read'),
    applied_at: z.string().nullable(),
    pending_messages: z.int().min(0).describe('acknowledged, not applied yet (exact up to 100,000; above that, the span of log ids, an upper bound)'),
    behind_ms: z.number().min(0).describe('age of the oldest message not applied yet (0 when caught up)'),
    failure: z
      .object({ id: z.int(), reason: z.string(), at: z.string().nullable() })
      .nullable()
      .describe('the message the projector cannot apply (it retries; the observer keeps acknowledging)'),
    process: z
      .object({
        applied_id: z.int(),
        known_logged_id: z.int(),
        messages_applied: z.int(),
        batches: z.int(),
        blocks_sent_ahead: z.int().describe('blocks sent without waiting for the answers to the statements before them (pipelined)'),
        send_ahead_retries: z.int().describe('batches applied again, each block waiting, because a block sent ahead missed the one-statement path'),
        derived_behind: z.int().describe("batches whose derived tables were applied just after their commit, on a second connection, while the next batch was applied"),
        lag_ms: z.object({ samples: z.int(), p50: z.number().nullable(), p99: z.number().nullable(), max: z.number().nullable() }),
        failure: z.object({ id: z.int(), reason: z.string(), at: z.string() }).nullable(),
      })
      .nullable()
      .describe("this process's projector: acknowledgement → projection lag of its last 4,096 messages (null where no observer runs)"),
  }),
);

export const NodePoolStatus = component(
  'NodePoolStatus',
  z
    .object({
      total: z.int().min(0),
      up: z.int().min(0),
      nodes: z.array(
        z.object({
          url: z.string(),
          status: z.enum(['up', 'down']),
          latency_ms: z.number().nullable(),
          last_error: z.string().nullable(),
          last_error_at: z.string().nullable(),
          consecutive_failures: z.int().min(0),
          next_probe_at: z.string().nullable(),
          requests: z.int().min(0),
        }),
      ),
    })
    .describe('The Stacks node pool behind /v2/*: health of each node'),
);

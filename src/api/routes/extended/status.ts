/** GET /extended — service status and chain tip; the root and /extended/v1/status redirect to it; push counters. */
import { endpoint, raw } from '../../endpoint.js';
import { httpError, json, redirect } from '../../../http/response.js';
import type { ApiContext } from '../../context.js';
import { statusRows } from '../../../store/status.js';
import { NodePoolStatus, StatusResponse, PushStatusResponse, IngestStatusResponse } from '../../schemas/blocks.js';
import { projectorRow } from '../../../store/event-log.js';
import { ingestStatus } from '../../../projector/status.js';

export async function statusJson(ctx: ApiContext): Promise<Record<string, unknown>> {
  const { pox, tip, microblock } = await statusRows(ctx.sql);
  const body: Record<string, unknown> = {
    server_version: ctx.serverVersion,
    status: 'ready',
    pox_v1_unlock_height: pox?.pox_v1_unlock_height ?? null,
    pox_v2_unlock_height: pox?.pox_v2_unlock_height ?? null,
    pox_v3_unlock_height: pox?.pox_v3_unlock_height ?? null,
  };
  if (tip) {
    const chain_tip: Record<string, unknown> = {
      block_height: tip.block_height,
      block_hash: tip.block_hash,
      index_block_hash: tip.index_block_hash,
      burn_block_height: tip.burn_block_height,
    };
    if (microblock) {
      chain_tip.microblock_hash = microblock.microblock_hash;
      chain_tip.microblock_sequence = microblock.microblock_sequence;
    }
    body.chain_tip = chain_tip;
  }
  return body;
}

/** The reference's hidden 301s to /extended. */
function redirectToStatus(path: string, operationId: string) {
  return endpoint({
    method: 'GET',
    path,
    operationId,
    summary: 'Redirects to /extended',
    tags: ['Info'],
    redirect: { status: 301, description: 'Moved to /extended' },
    cache: 'none',
    handler: () => raw(redirect(301, '/extended')),
  });
}

export const statusEndpoints = [
  endpoint({
    method: 'GET',
    path: '/extended',
    operationId: 'get_status',
    summary: 'API status',
    description: 'Server version, status, PoX unlock heights and the chain tip (absent on an empty database).',
    tags: ['Info'],
    response: StatusResponse,
    responseDescription: 'Status',
    errors: [503],
    handler: (_input, ctx) => statusJson(ctx),
  }),
  redirectToStatus('/', 'redirect_root'),
  redirectToStatus('/extended/v1/status', 'redirect_status'),
  endpoint({
    method: 'GET',
    path: '/extended/v1/status/push',
    operationId: 'get_push_status',
    summary: 'Real-time push counters',
    description:
      'Counters of the api process that answers (each process of a deployment has its own): open Socket.IO and ' +
      'JSON-RPC connections, messages delivered, newest cursor, slow-consumer disconnects, refused connections and ' +
      'resumes. Not part of the reference API.',
    tags: ['Info'],
    response: PushStatusResponse,
    responseDescription: 'Counters',
    errors: [503],
    cache: 'none',
    handler: (_input, ctx) => {
      const m = ctx.pushMetrics?.();
      return raw(m ? json(200, m, { 'cache-control': 'no-store' }) : httpError(503, 'The real-time push is not running in this process'));
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/status/ingest',
    operationId: 'get_ingest_status',
    summary: 'Ingestion: acknowledged and applied messages',
    description:
      "The observer acknowledges a node's message once it is in the durable log; the projector applies the log to the " +
      'tables REST and push read, in order. This shows the newest acknowledged and the last applied message, how far ' +
      'behind the projector is, the message it cannot apply if it is stuck, and (in the process that runs the ' +
      'observer) its acknowledgement → projection lag. Not part of the reference API.',
    tags: ['Info'],
    response: IngestStatusResponse,
    responseDescription: 'Ingestion status',
    errors: [503],
    cache: 'none',
    handler: async (_input, ctx) => raw(json(200, ingestStatus(await projectorRow(ctx.sql), ctx.ingestMetrics?.()), { 'cache-control': 'no-store' })),
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/status/nodes',
    operationId: 'get_node_pool_status',
    summary: 'Health of the Stacks node pool',
    description: 'Each node behind `/v2/*`: up or down, latency, last error, next probe. Not part of the reference API.',
    tags: ['Info'],
    response: NodePoolStatus,
    responseDescription: 'The pool',
    cache: 'none',
    servedBy: 'node-proxy',
    handler: () => undefined,
  }),
  endpoint({
    method: 'ANY',
    path: '/v2/*',
    operationId: 'proxy_node_rpc',
    summary: 'Stacks node RPC, proxied',
    description:
      'Every `/v2/…` request (any method, query and body) is forwarded to a healthy node of the pool ' +
      '(`STACKS_NODE_RPC_URLS`, round robin with failover) and its answer passed through unchanged.',
    tags: ['Node RPC'],
    text: { contentType: 'application/json', description: "The node's answer, passed through" },
    errors: [413, 502, 503, 504],
    cache: 'none',
    servedBy: 'node-proxy',
    handler: () => undefined,
  }),
];

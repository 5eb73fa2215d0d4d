/** POST /rosetta/v1/network/{list,options,status}. */
import { raw } from '../../endpoint.js';
import { httpError } from '../../../http/response.js';
import * as store from '../../../store/rosetta.js';
import { nodeCall, NoNodeError } from '../../../proxy/rpc.js';
import { NetworkListRequest, NetworkRequest, NetworkListResponse, NetworkOptionsResponse, NetworkStatusResponse } from '../../schemas/rosetta.js';
import { OPERATION_STATUSES, OPERATION_TYPES, ROSETTA_VERSION, RosettaErrors, checkNetwork, nodeUnavailableReply, fail, rosettaGuard, rosettaInvalid, serviceNetwork, rosettaEndpoint } from '../../rosetta.js';
import { rosettaBlockJson } from './shared.js';


interface Neighbor {
  public_key_hash?: string;
}

export const rosettaNetworkEndpoints = [
  rosettaEndpoint({
    path: '/rosetta/v1/network/list',
    operationId: 'rosetta_network_list',
    summary: 'Networks served',
    description: 'The one network of this service (from STACKS_CHAIN_ID, else the network of the stored chain; both while unknown).',
    body: NetworkListRequest,
    response: NetworkListResponse,
    errors: [400],
    invalid: rosettaInvalid(undefined),
    handler: async (_input, ctx) => {
      const net = await serviceNetwork(ctx);
      const nets = net ? [net] : ['mainnet', 'testnet'];
      return { network_identifiers: nets.map((network) => ({ blockchain: 'stacks', network })) };
    },
  }),
  rosettaEndpoint({
    path: '/rosetta/v1/network/options',
    operationId: 'rosetta_network_options',
    summary: 'Versions, operation types and statuses, errors',
    description:
      '`node_version` is the Node.js version running this service and `middleware_version` its own version (the reference reports its own runtime and package the same way).',
    body: NetworkRequest,
    response: NetworkOptionsResponse,
    errors: [400],
    handler: ({ body }, ctx) =>
      rosettaGuard(async () => {
        await checkNetwork(ctx, body.network_identifier);
        return {
          version: { rosetta_version: ROSETTA_VERSION, node_version: process.version, middleware_version: ctx.serverVersion.replace(/^\D*/, '') },
          allow: {
            operation_statuses: OPERATION_STATUSES,
            operation_types: [...OPERATION_TYPES],
            errors: Object.values(RosettaErrors),
            historical_balance_lookup: true,
          },
        };
      }),
  }),
  rosettaEndpoint({
    path: '/rosetta/v1/network/status',
    operationId: 'rosetta_network_status',
    summary: 'Chain tip, genesis block, peers and sync status',
    description: "Needs a Stacks node (the node pool): its /v2/info gives the sync target and /v2/neighbors the peers; without one, 503.",
    body: NetworkRequest,
    response: NetworkStatusResponse,
    errors: [400, 503],
    handler: ({ body }, ctx) =>
      rosettaGuard(async () => {
        const network = await checkNetwork(ctx, body.network_identifier);
        const tip = await store.rosettaTip(ctx.sql);
        const genesis = await store.rosettaBlockAtHeight(ctx.sql, 1);
        if (!tip || !genesis) fail(400, RosettaErrors.blockNotFound);
        const block = await rosettaBlockJson(ctx.sql, tip!, network, false);
        const first = await rosettaBlockJson(ctx.sql, genesis!, network, false);
        if (!block || !first) fail(400, RosettaErrors.blockNotFound);
        let neighbors: unknown;
        let info: unknown;
        try {
          neighbors = (await nodeCall(ctx.nodes?.(), 'GET', '/v2/neighbors')).body;
          info = (await nodeCall(ctx.nodes?.(), 'GET', '/v2/info')).body;
        } catch (err) {
          if (err instanceof NoNodeError) return nodeUnavailableReply(err.message);
          throw err;
        }
        const n = (neighbors ?? {}) as { inbound?: Neighbor[]; outbound?: Neighbor[] };
        const ids = new Set([...(n.inbound ?? []), ...(n.outbound ?? [])].map((x) => x.public_key_hash).filter((x): x is string => typeof x === 'string'));
        const target = Number((info as { stacks_tip_height?: unknown } | null)?.stacks_tip_height ?? 0);
        return {
          current_block_identifier: block!.block_identifier,
          current_block_timestamp: block!.timestamp,
          genesis_block_identifier: first!.block_identifier,
          peers: [...ids].map((peer_id) => ({ peer_id })),
          current_burn_block_height: block!.metadata.burn_block_height,
          sync_status: { current_index: block!.block_identifier.index, target_index: target, synced: block!.block_identifier.index === target },
        };
      }),
  }),
];

/**
 * JSON calls to the node pool for features that need the node's answer itself (Rosetta's network/status, construction
 * metadata and submit), with the pool's rules: round robin over nodes that are up, a node that refuses the connection,
 * times out or answers 5xx is marked down (and probed back), a GET is retried once on another node.
 */
import { nodePath, type NodePool, type PoolNode } from './pool.js';
import { PulseError } from '../errors.js';

/** No node could answer (none configured, all down, or all failed); one may answer later. */
export class NoNodeError extends PulseError {
  constructor(message: string) {
    super(message, { retryable: true });
  }
}

export interface NodeAnswer {
  status: number;
  body: unknown;
  text: string;
}

function once(node: PoolNode, method: 'GET' | 'POST', path: string, body: { contentType: string; data: Buffer | string } | undefined, timeoutMs: number): Promise<NodeAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body) headers['content-type'] = body.contentType;
    const auth = node.base.username ? `${decodeURIComponent(node.base.username)}:${decodeURIComponent(node.base.password)}` : undefined;
    const req = node.module.request(
      { protocol: node.base.protocol, hostname: node.base.hostname, port: node.base.port, path: nodePath(node, path), method, headers, agent: node.agent, auth, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : null;
          } catch {
            /* not JSON: the text */
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, text });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`node timeout after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body?.data);
  });
}

/** One call through the pool; throws NoNodeError when no node answered. */
export async function nodeCall(
  pool: NodePool | undefined,
  method: 'GET' | 'POST',
  path: string,
  body?: { contentType: string; data: Buffer | string },
  timeoutMs = 30_000,
): Promise<NodeAnswer> {
  if (!pool) throw new NoNodeError('no Stacks node configured (STACKS_NODE_RPC_URLS)');
  const tried = new Set<PoolNode>();
  let lastError = 'no Stacks node available';
  for (let attempt = 0; attempt < (method === 'GET' ? 2 : 1); attempt++) {
    const node = pool.pick(tried);
    if (!node) break;
    tried.add(node);
    const started = performance.now();
    try {
      node.requests++;
      const answer = await once(node, method, path, body, timeoutMs);
      if (answer.status >= 500) pool.failed(node, `HTTP ${answer.status}`);
      else pool.succeeded(node, performance.now() - started);
      return answer;
    } catch (err) {
      lastError = (err as Error).message;
      pool.failed(node, lastError);
    }
  }
  throw new NoNodeError(lastError);
}

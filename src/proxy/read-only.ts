// Read-only contract calls for the API's own use (BNS prices): POST /v2/contracts/call-read/… on the node pool, with
// the proxy's rules — round robin over the nodes that are up, a refused or timed-out call retried once on another
// node, a failing node marked down — and its answers when no node serves: 503 (+ Retry-After when the nodes are
// down), 504 on a timeout, 502 when the node breaks the connection or answers 5xx.
import { HttpError } from '../http/response.js';
import { nodePath, type NodePool, type PoolNode } from './pool.js';

export const DEFAULT_READ_ONLY_TIMEOUT_MS = 10_000;

export interface ReadOnlyCall {
  /** `SP….contract` */
  contract: string;
  functionName: string;
  /** serialized Clarity arguments, 0x-hex */
  args: string[];
  sender: string;
  timeoutMs?: number;
}

/** The node's answer: `{okay: true, result: "0x…"}` or `{okay: false, cause}`. */
export interface ReadOnlyResult {
  okay: boolean;
  result?: string;
  cause?: string;
}

type Attempt =
  | { ok: true; status: number; body: string; latencyMs: number }
  | { ok: false; kind: 'refused' | 'timeout' | 'error'; reason: string };

function post(node: PoolNode, path: string, payload: string, timeoutMs: number): Promise<Attempt> {
  return new Promise((resolve) => {
    const started = performance.now();
    let done = false;
    const finish = (a: Attempt) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(a);
    };
    let req: ReturnType<PoolNode['module']['request']>;
    try {
      req = node.module.request(
        {
          protocol: node.base.protocol,
          hostname: node.base.hostname,
          port: node.base.port || undefined,
          path: nodePath(node, path),
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
          agent: node.agent,
          auth: node.base.username ? `${decodeURIComponent(node.base.username)}:${decodeURIComponent(node.base.password)}` : undefined,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            finish({ ok: true, status: res.statusCode ?? 502, body: Buffer.concat(chunks).toString('utf8'), latencyMs: performance.now() - started }),
          );
          res.on('error', (err) => finish({ ok: false, kind: 'error', reason: err.message }));
        },
      );
    } catch (err) {
      resolve({ ok: false, kind: 'error', reason: (err as Error).message });
      return;
    }
    const timer = setTimeout(() => {
      finish({ ok: false, kind: 'timeout', reason: `no response within ${timeoutMs} ms` });
      req.destroy();
    }, timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) =>
      finish(err.code === 'ECONNREFUSED' ? { ok: false, kind: 'refused', reason: 'connection refused' } : { ok: false, kind: 'error', reason: err.code ?? err.message }),
    );
    req.end(payload);
  });
}

function failure(a: Extract<Attempt, { ok: false }>): HttpError {
  if (a.kind === 'timeout') return new HttpError(504, `The Stacks node did not answer in time (${a.reason})`);
  if (a.kind === 'refused') return new HttpError(503, `No Stacks node is available (${a.reason})`, undefined, { 'retry-after': '5' });
  return new HttpError(502, `The Stacks node failed to answer (${a.reason})`);
}

/** Calls a read-only function; throws an HttpError (503/504/502) when no node answers it. */
export async function callReadOnly(pool: NodePool | undefined, call: ReadOnlyCall): Promise<ReadOnlyResult> {
  if (!pool || pool.nodes.length === 0) throw new HttpError(503, 'No Stacks node is configured (STACKS_NODE_RPC_URLS)');
  const [address, name] = call.contract.split('.');
  const path = `/v2/contracts/call-read/${address}/${encodeURIComponent(name)}/${encodeURIComponent(call.functionName)}`;
  const payload = JSON.stringify({ sender: call.sender, arguments: call.args });
  const tried = new Set<PoolNode>();
  let last: Extract<Attempt, { ok: false }> | undefined;
  for (let i = 0; i < 2; i++) {
    const node = pool.pick(tried);
    if (!node) break;
    node.requests++;
    const a = await post(node, path, payload, call.timeoutMs ?? DEFAULT_READ_ONLY_TIMEOUT_MS);
    if (a.ok) {
      if (a.status >= 500) {
        pool.failed(node, `status ${a.status} on POST ${path}`);
        throw new HttpError(502, `The Stacks node failed to answer (status ${a.status})`);
      }
      pool.succeeded(node, a.latencyMs);
      try {
        const body = JSON.parse(a.body) as ReadOnlyResult;
        if (body && typeof body.okay === 'boolean') return body;
      } catch {
        /* below */
      }
      return { okay: false, cause: `status ${a.status}: ${a.body.slice(0, 200)}` };
    }
    pool.failed(node, a.reason);
    tried.add(node);
    last = a;
  }
  if (last) throw failure(last);
  throw new HttpError(503, 'No Stacks node is available', undefined, { 'retry-after': '5' });
}

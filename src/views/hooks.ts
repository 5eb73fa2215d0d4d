/** Hooks as the management API shows them (pure). The secret is never shown here: only once, at creation. */
import type { DeliveryRow, HookRow } from '../store/hooks.js';

export function hookView(h: HookRow) {
  return {
    uuid: h.uuid,
    name: h.name,
    version: h.version,
    chain: 'stacks' as const,
    network: h.network,
    status: h.status,
    occurrences: h.occurrences,
    predicate: h.predicate,
    then_that: { http_post: { url: h.url, authorization_header: h.authorization_header === null ? undefined : '(set)' } },
    history_evaluated: h.from_seq !== null,
    created_at: h.created_at.toISOString(),
    updated_at: h.updated_at.toISOString(),
  };
}

export function deliveryView(d: DeliveryRow) {
  return {
    delivery_id: String(d.id),
    action: d.action,
    block_identifier: { index: d.block_height, hash: d.index_block_hash },
    status: d.status,
    attempts: d.tries.map((t) => ({
      attempt: t.attempt,
      at: new Date(t.at).toISOString(),
      status_code: t.status_code,
      error: t.error,
      ms: t.ms,
    })),
    created_at: d.created_at.toISOString(),
    delivered_at: d.delivered_at?.toISOString() ?? null,
    next_attempt_at: d.status === 'pending' ? d.next_attempt_at.toISOString() : null,
  };
}

/** The v2 cursor page body, shared by the list endpoints (src/api/paging.ts) and the push payloads that carry a page. */
import type { CursorPage } from '../store/blocks.js';

/** The cursor answer of a page whose cursor names an item (e.g. a push payload built for a known block). */
export function cursorPageBody<R, T>(
  q: { limit: number; offset: number },
  page: CursorPage<R>,
  keyOf: (row: R) => string,
  toJson: (row: R) => T,
) {
  return {
    limit: q.limit,
    offset: q.offset,
    total: page.total,
    next_cursor: page.next_cursor,
    prev_cursor: page.prev_cursor,
    cursor: page.rows.length ? keyOf(page.rows[0]) : null,
    results: page.rows.map(toJson),
  };
}

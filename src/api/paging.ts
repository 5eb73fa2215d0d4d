/**
 * The two paging shapes of the reference's lists, as pure functions shared by every list endpoint:
 *   - limit/offset: `{limit, offset, total, results}` (schemas: `paging(def, max)` in schemas/params.ts);
 *   - cursor (v2/v3 lists): `{limit, offset, total, next_cursor, prev_cursor, cursor, results}`, the page read by a
 *     store function returning a `CursorPage` (src/store/blocks.ts): an unknown cursor is a 404.
 */
import { notFound } from './endpoint.js';
import type { CursorPage } from '../store/blocks.js';

export function offsetPageJson<T>(q: { limit: number; offset: number }, total: number, results: T[]) {
  return { limit: q.limit, offset: q.offset, total, results };
}

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

/** The cursor answer of a request: an unknown cursor is a 404. */
export function cursorPageJson<R, T>(
  q: { limit: number; offset: number },
  page: CursorPage<R>,
  keyOf: (row: R) => string,
  toJson: (row: R) => T,
) {
  if (!page.cursorFound) notFound('Cursor not found');
  return cursorPageBody(q, page, keyOf, toJson);
}

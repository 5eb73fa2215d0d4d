/**
 * The two paging shapes of the reference's lists, as pure functions shared by every list endpoint:
 *   - limit/offset: `{limit, offset, total, results}` (schemas: `paging(def, max)` in schemas/params.ts);
 *   - cursor (v2 lists): `{limit, offset, total, next_cursor, prev_cursor, cursor, results}`, the page read by a
 *     store function returning a `CursorPage` (src/store/blocks.ts): an unknown cursor is a 404;
 *   - keyset (v3 lists): `{limit, total, cursor: {next, previous, current}, results}`, the page read from a position by
 *     a store function returning a `KeysetPage` (src/store/principals-v3.ts), or cut here from rows already in page
 *     order (`keysetSlice`). A v3 cursor is a position in the page order, not a row: one that names no row starts
 *     the page at the next row after it (the reference reads `>=`/`<=`), never a 404; a malformed one is a 400.
 */
import { notFound } from './endpoint.js';
import type { CursorPage } from '../store/blocks.js';
import { cursorPageBody } from '../views/paging.js';
import type { KeysetPage } from '../store/principals-v3.js';

export function offsetPageJson<T>(q: { limit: number; offset: number }, total: number, results: T[]) {
  return { limit: q.limit, offset: q.offset, total, results };
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

/** The v3 answer of a keyset page; `total` is 0 on an empty page, as in the reference. */
export function keysetPageJson<R, K, T>(
  limit: number,
  page: KeysetPage<R, K>,
  encode: (key: K) => string,
  keyOf: (row: R) => K,
  toJson: (row: R) => T,
) {
  return {
    limit,
    total: page.rows.length ? page.total : 0,
    cursor: {
      next: page.next === null ? null : encode(page.next),
      previous: page.prev === null ? null : encode(page.prev),
      current: page.rows.length ? encode(keyOf(page.rows[0])) : null,
    },
    results: page.rows.map(toJson),
  };
}

/**
 * A keyset page cut from all the rows of a list, sorted in page order (`compare`): from the first row at or after
 * `cursor`, `limit` rows; next is the row after them; prev is the row `limit` rows before the first (none when fewer
 * rows precede it, as the reference's OFFSET limit−1 reads it); total counts every row.
 */
export function keysetSlice<R, K>(
  rows: readonly R[],
  compare: (a: R, b: R) => number,
  q: { limit: number; cursor?: K },
  atOrAfter: (row: R, cursor: K) => boolean,
): KeysetPage<R, R> {
  const sorted = [...rows].sort(compare);
  const start = q.cursor === undefined ? 0 : sorted.findIndex((r) => atOrAfter(r, q.cursor!));
  if (start < 0 || start >= sorted.length) return { rows: [], total: 0, next: null, prev: null };
  const page = sorted.slice(start, start + q.limit);
  return {
    rows: page,
    total: sorted.length,
    next: sorted[start + q.limit] ?? null,
    prev: start - q.limit >= 0 ? sorted[start - q.limit] : null,
  };
}

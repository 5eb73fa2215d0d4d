// Query-string helpers. URLSearchParams already decodes %xx and '+'.

/**
 * All values of a repeated parameter, in request order: `?tx_id=a&tx_id=b` → ['a', 'b'].
 * With `splitCommas`, each value is also split on commas (`?type=a,b&type=c` → ['a', 'b', 'c']);
 * empty items are dropped then.
 */
export function queryList(query: URLSearchParams, name: string, options?: { splitCommas?: boolean }): string[] {
  const values = query.getAll(name);
  if (!options?.splitCommas) return values;
  const out: string[] = [];
  for (const v of values) {
    for (const item of v.split(',')) {
      const t = item.trim();
      if (t !== '') out.push(t);
    }
  }
  return out;
}

/**
 * The query as a plain object for schema validation: a parameter given once → string,
 * given more than once → string[] (in request order).
 */
export function queryObject(query: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  for (const [k, v] of query) {
    const prev = out[k];
    if (prev === undefined) out[k] = v;
    else if (Array.isArray(prev)) prev.push(v);
    else out[k] = [prev, v];
  }
  return out;
}

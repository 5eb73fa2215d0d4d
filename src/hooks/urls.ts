/** Which hosts may receive deliveries (HOOKS_ALLOWED_HOSTS): exact names or addresses, or `*.example.com`. */

/** True when `url`'s host is allowed; an empty list allows every host (loopback included). */
export function hostAllowed(url: string, allowed: readonly string[]): boolean {
  if (!allowed.length) return true;
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  } catch {
    return false;
  }
  return allowed.some((a) => {
    const p = a.toLowerCase().replace(/^\[(.*)\]$/, '$1');
    return p.startsWith('*.') ? host.endsWith(p.slice(1)) && host.length > p.length - 1 : host === p;
  });
}

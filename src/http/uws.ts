// uWebSockets.js, native binding only. The npm package silently falls back to a slow `ws`-based
// emulation when its binary does not load; assertNativeUws() turns that into a loud failure.
import uWS from 'uWebSockets.js';

export { uWS };

/** Throws unless the native uWebSockets.js binding is loaded (not the JavaScript fallback). */
export function assertNativeUws(): void {
  const m = uWS as unknown as Record<string, unknown>;
  // The native binding exports getParts and other C++ functions; the fallback (dist/index.js)
  // only exports App, _cfg, us_listen_socket_close and us_socket_local_port.
  if (typeof m.us_socket_local_port !== 'function' || typeof m.getParts !== 'function') {
    throw new Error(
      'uWebSockets.js native binding is not loaded (the package fell back to its slow JavaScript emulation). ' +
        `Node ${process.version} (ABI ${process.versions.modules}, ${process.platform}-${process.arch}) needs a matching ` +
        'binary in node_modules/uWebSockets.js/binaries; also make sure UWS_USE_FALLBACK is not set.',
    );
  }
}

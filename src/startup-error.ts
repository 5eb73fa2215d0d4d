/**
 * A start-up failure the operator fixes by changing a setting or stopping another process: the CLI prints its
 * message as one line (no stack trace, which goes to the debug log) and exits non-zero.
 */
export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
  }
}

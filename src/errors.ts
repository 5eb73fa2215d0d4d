/**
 * The base of stacks-pulse's own errors. Each subclass is named after itself (`err.name`), may carry the failure
 * behind it (`cause`), and says whether the same call may succeed if tried again (`retryable`, false unless the
 * thrower knows better: no node answering now, an upstream timeout); what to do about it is the caller's decision.
 */
export class PulseError extends Error {
  readonly retryable: boolean;

  constructor(message?: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.retryable = options.retryable ?? false;
  }
}

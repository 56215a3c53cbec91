/**
 * Why a request got no answer, in the system's words: the code behind a failed fetch (undici
 * wraps it, sometimes in an AggregateError when a name has several addresses), or a timeout.
 * Shared by the API client, `drover admin` and the runner's registration, which all name the URL
 * and this cause when a server cannot be reached.
 */
export function networkCause(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return `no answer (${error.message})`;
  let cause = (error as { cause?: unknown })?.cause ?? error;
  if (cause instanceof AggregateError && cause.errors.length > 0) cause = cause.errors[0];
  const code = (cause as { code?: unknown })?.code;
  const message = cause instanceof Error ? cause.message : String(cause);
  return typeof code === 'string' ? (message.includes(code) ? message : `${code} (${message})`) : message;
}

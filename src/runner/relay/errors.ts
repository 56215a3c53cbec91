/**
 * Errors the relay answers itself, in the shape of the provider the agent called, so its SDK or CLI
 * reports them as it would the provider's own (a refused budget reads as a rate-limit error).
 */
import type { ServerResponse } from 'node:http';
import type { ModelProviderId } from '../../agents/model-providers.ts';

const STATUS_NAMES: Record<number, { anthropic: string; openai: string; gemini: string }> = {
  401: { anthropic: 'authentication_error', openai: 'invalid_api_key', gemini: 'UNAUTHENTICATED' },
  404: { anthropic: 'not_found_error', openai: 'not_found', gemini: 'NOT_FOUND' },
  413: { anthropic: 'request_too_large', openai: 'invalid_request_error', gemini: 'INVALID_ARGUMENT' },
  429: { anthropic: 'rate_limit_error', openai: 'insufficient_quota', gemini: 'RESOURCE_EXHAUSTED' },
  502: { anthropic: 'api_error', openai: 'server_error', gemini: 'UNAVAILABLE' },
};

export function providerError(provider: ModelProviderId | null, status: number, message: string): { status: number; body: string } {
  const names = STATUS_NAMES[status] ?? STATUS_NAMES[502];
  let body: unknown;
  if (provider === 'openai') body = { error: { message, type: names.openai, code: status === 429 ? 'budget_reached' : names.openai, param: null } };
  else if (provider === 'gemini') body = { error: { code: status, message, status: names.gemini } };
  else body = { type: 'error', error: { type: names.anthropic, message } };
  return { status, body: JSON.stringify(body) };
}

export function sendProviderError(res: ServerResponse, provider: ModelProviderId | null, status: number, message: string): void {
  const { body } = providerError(provider, status, message);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(status === 429 ? { 'retry-after': '3600' } : {}) });
  res.end(body);
}

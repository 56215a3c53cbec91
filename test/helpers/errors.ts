// the error body (docs/api.md), checked the same way by every API test.
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

export interface ErrorBodyJson {
  error: string;
  code: string;
  request_id: string;
  details?: { field: string; message: string }[];
  required_scopes?: string[];
}

export const ALLOWED_ERROR_KEYS = ['error', 'code', 'request_id', 'details', 'required_scopes'];

/**
 * Asserts an error answer (the given status, else any 4xx) carrying the error body: JSON, a non-empty sentence, a code (the given one,
 * or one of the given ones), the request id of the `x-request-id` header, no other keys,
 * `details` naming fields (at least one on VALIDATION_FAILED), and `required_scopes` on a missing scope.
 */
export function expectError(
  res: LightMyRequestResponse,
  status?: number,
  code?: string | readonly string[],
): ErrorBodyJson {
  if (status !== undefined) {
    expect(res.statusCode, res.body).toBe(status);
  } else {
    expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
    expect(res.statusCode, res.body).toBeLessThan(500);
  }
  expect(res.headers['content-type']).toMatch(/^application\/json\b/);
  const body = res.json() as ErrorBodyJson;
  expect(typeof body.error).toBe('string');
  expect(body.error.trim().length).toBeGreaterThan(0);
  expect(body.code).toMatch(/^[A-Z][A-Z0-9_]*$/);
  if (typeof code === 'string') expect(body.code).toBe(code);
  else if (code !== undefined) expect(code).toContain(body.code);
  expect(typeof body.request_id).toBe('string');
  expect(body.request_id.length).toBeGreaterThan(0);
  expect(body.request_id).toBe(res.headers['x-request-id']);
  for (const key of Object.keys(body)) expect(ALLOWED_ERROR_KEYS).toContain(key);
  if (body.code === 'INSUFFICIENT_SCOPE') expect(body.required_scopes?.length, res.body).toBeGreaterThan(0);
  if (body.code === 'VALIDATION_FAILED') expect(body.details?.length, res.body).toBeGreaterThan(0);
  for (const detail of body.details ?? []) {
    expect(typeof detail.field).toBe('string');
    expect(typeof detail.message).toBe('string');
    expect(detail.message.length).toBeGreaterThan(0);
  }
  return body;
}

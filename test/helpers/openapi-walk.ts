/**
 * Reading the OpenAPI document as a client (or a fuzzer) does: its operations, their parameters
 * and bodies, and validators for the responses they declare (Ajv, JSON Schema 2020-12 as
 * OpenAPI 3.1 uses it).
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Parameter } from './schema-violations.ts';
import type { Schema } from './schema-arbitrary.ts';

export interface OpenApiDocument {
  openapi: string;
  info: Record<string, unknown>;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; responses?: Record<string, ResponseObject>; headers?: Record<string, unknown> };
  security?: Record<string, string[]>[];
  webhooks?: Record<string, Record<string, Operation>>;
}

export interface ResponseObject {
  $ref?: string;
  description?: string;
  headers?: Record<string, { $ref?: string; schema?: Schema }>;
  content?: Record<string, { schema: Schema }>;
}

export interface Operation {
  operationId: string;
  summary?: string;
  description?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, ResponseObject>;
  security?: Record<string, string[]>[];
  'x-required-scopes'?: string[];
}

export interface WalkedOperation {
  method: string;
  path: string;
  operation: Operation;
}

export const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

export function operationsOf(document: OpenApiDocument): WalkedOperation[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ method, path, operation })),
  );
}

/** `#/components/...` → the object it names. */
export function resolvePointer<T>(document: OpenApiDocument, ref: string): T {
  if (!ref.startsWith('#/')) throw new Error(`not a local reference: ${ref}`);
  let node: unknown = document;
  for (const part of ref.slice(2).split('/')) node = (node as Record<string, unknown>)[part.replaceAll('~1', '/').replaceAll('~0', '~')];
  if (node === undefined) throw new Error(`${ref} does not resolve`);
  return node as T;
}

export function resolveResponse(document: OpenApiDocument, response: ResponseObject): ResponseObject {
  return response.$ref ? resolvePointer<ResponseObject>(document, response.$ref) : response;
}

/** The response an operation declares for a status: exact, `4XX`-style, or `default`. */
export function declaredResponse(document: OpenApiDocument, operation: Operation, status: number): ResponseObject | undefined {
  const declared = operation.responses[String(status)] ?? operation.responses[`${String(status)[0]}XX`] ?? operation.responses.default;
  return declared && resolveResponse(document, declared);
}

/** Validates values against schemas of the document (their `#/components/...` references included). */
export class SchemaValidator {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<Schema, ValidateFunction>();

  constructor(document: OpenApiDocument) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats.default(this.ajv);
    this.ajv.addSchema({ $id: 'doc', components: document.components }, 'doc');
  }

  /** null when `value` is valid, else Ajv's errors as text. */
  check(schema: Schema, value: unknown): string | null {
    let validate = this.compiled.get(schema);
    if (!validate) {
      const rebased = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')) as Schema;
      validate = this.ajv.compile(rebased);
      this.compiled.set(schema, validate);
    }
    return validate(value) ? null : this.ajv.errorsText(validate.errors, { separator: '; ' });
  }
}

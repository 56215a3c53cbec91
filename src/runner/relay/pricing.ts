/**
 * Prices a model call: the operator's price file first (`drover runner --prices FILE`), then the
 * maintained table of @pydantic/genai-prices. A model neither knows costs null (its tokens still count).
 *
 * The price file is JSON: `{"<model>": {"input_mtok": 3, "output_mtok": 15, "cache_read_mtok": 0.3,
 * "cache_write_mtok": 3.75}}`, US dollars per million tokens; a key `"<provider>:<model>"`
 * (anthropic, openai, gemini) wins over the bare model name.
 */
import fs from 'node:fs';
import { calcPrice } from '@pydantic/genai-prices';
import { modelProvider, type ModelProviderId } from '../../agents/model-providers.ts';
import type { CallUsage } from './usage.ts';

export interface ModelPrice {
  input_mtok: number;
  output_mtok: number;
  cache_read_mtok?: number;
  cache_write_mtok?: number;
}

export type PriceOverrides = Record<string, ModelPrice>;

const FIELDS = ['input_mtok', 'output_mtok', 'cache_read_mtok', 'cache_write_mtok'] as const;

/** Reads and checks an operator's price file; throws with a message naming the problem. */
export function readPriceFile(file: string): PriceOverrides {
  const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`${file}: must be a JSON object of model → prices`);
  const out: PriceOverrides = {};
  for (const [model, price] of Object.entries(parsed as Record<string, unknown>)) {
    const p = price as Record<string, unknown> | null;
    if (!p || typeof p !== 'object') throw new Error(`${file}: ${model} must be an object`);
    for (const field of FIELDS) {
      const v = p[field];
      const required = field === 'input_mtok' || field === 'output_mtok';
      if (v === undefined && !required) continue;
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new Error(`${file}: ${model}.${field} must be a number ≥ 0`);
    }
    out[model] = p as unknown as ModelPrice;
  }
  return out;
}

const roundCost = (value: number): number => Math.round(value * 1e9) / 1e9;

export class PriceTable {
  constructor(private readonly overrides: PriceOverrides = {}) {}

  /** The call's cost in US dollars, or null when no price is known for its model. */
  cost(provider: ModelProviderId, usage: CallUsage): number | null {
    const model = usage.model;
    if (model === null) return null;
    const own = this.overrides[`${provider}:${model}`] ?? this.overrides[model];
    if (own) {
      const total =
        usage.input_tokens * own.input_mtok +
        usage.output_tokens * own.output_mtok +
        usage.cache_read_tokens * (own.cache_read_mtok ?? own.input_mtok) +
        usage.cache_write_tokens * (own.cache_write_mtok ?? own.input_mtok);
      return roundCost(total / 1e6);
    }
    const providerId = modelProvider(provider)?.priceProvider ?? provider;
    // genai-prices counts cached input inside input_tokens.
    const total = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens;
    const priced = calcPrice(
      { input_tokens: total, output_tokens: usage.output_tokens, cache_read_tokens: usage.cache_read_tokens, cache_write_tokens: usage.cache_write_tokens },
      model,
      { providerId },
    );
    return priced ? roundCost(priced.total_price) : null;
  }
}

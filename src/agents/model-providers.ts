/**
 * The model APIs the runner's relay knows (docs/agents.md "The model relay"): which credentials
 * name each, which variable carries its base URL, where it goes by default, and how its key and
 * usage travel. Pure data, shared by the runner (the relay) and the server (docs, validation).
 */

export type ModelProviderId = 'anthropic' | 'openai' | 'gemini';

export interface ModelProvider {
  id: ModelProviderId;
  /** The `CREDENTIAL` names that are this provider's key. */
  credentials: readonly string[];
  /** The variable its SDKs and CLIs read the base URL from. */
  baseUrlVariable: string;
  /** Where calls go when the pod sets no `ENV` for `baseUrlVariable`. */
  defaultUpstream: string;
  /** The API shapes the relay reads usage from. */
  shapes: readonly string[];
  /** The provider's id in the price table (@pydantic/genai-prices). */
  priceProvider: string;
}

export const MODEL_PROVIDERS: readonly ModelProvider[] = [
  {
    id: 'anthropic',
    credentials: ['ANTHROPIC_API_KEY'],
    baseUrlVariable: 'ANTHROPIC_BASE_URL',
    defaultUpstream: 'https://api.anthropic.com',
    shapes: ['messages'],
    priceProvider: 'anthropic',
  },
  {
    id: 'openai',
    credentials: ['OPENAI_API_KEY'],
    // OpenAI's SDKs take the base URL with its /v1 (they append /responses, /chat/completions).
    baseUrlVariable: 'OPENAI_BASE_URL',
    defaultUpstream: 'https://api.openai.com/v1',
    shapes: ['responses', 'chat_completions'],
    priceProvider: 'openai',
  },
  {
    id: 'gemini',
    credentials: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
    baseUrlVariable: 'GOOGLE_GEMINI_BASE_URL',
    defaultUpstream: 'https://generativelanguage.googleapis.com',
    shapes: ['generate_content'],
    priceProvider: 'google',
  },
];

/** The provider whose key `credential` is, or null for any other credential. */
export function providerOfCredential(credential: string): ModelProvider | null {
  return MODEL_PROVIDERS.find((p) => p.credentials.includes(credential)) ?? null;
}

export function modelProvider(id: string): ModelProvider | null {
  return MODEL_PROVIDERS.find((p) => p.id === id) ?? null;
}

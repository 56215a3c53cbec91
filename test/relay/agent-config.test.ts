/**
 * Each CLI's own configuration for the model relay (docs/agents.md "Each CLI's own configuration"),
 * written by the runner's real relayAgent into a real pod HOME: Gemini CLI's settings, OpenCode's
 * providers (its built-in one and the operator's that read the credential), Codex's provider block
 * as arguments; what the template held is kept; a link, FIFO or device planted at a config file
 * changes nothing outside the HOME, blocks nothing, and the pod's output is told why.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PodSpec } from '../../src/protocol/runner-link.ts';
import { relayAgent } from '../../src/runner/relay/agent-env.ts';
import { PriceTable } from '../../src/runner/relay/pricing.ts';
import { ModelRelay } from '../../src/runner/relay/server.ts';
import { PLANTS, plant } from '../helpers/plant.ts';

const REAL = { OPENAI_API_KEY: 'sk-real-openai-config-test-0001', GEMINI_API_KEY: 'real-gemini-config-test-0002', ANTHROPIC_API_KEY: 'sk-ant-real-config-test-0003' };
const PLACEHOLDER = /^sk-drover-relay-[0-9a-f]{48}$/;

const spec = (slug: string, credentials: string[]) =>
  ({ key: `p-config-${slug}-${credentials.length}`, credentials, agent_env: {}, budgets: [], agent: { slug, custom: null } }) as unknown as PodSpec;

describe('the runner writes each CLI its relay configuration', () => {
  let relay: ModelRelay;
  let scratch: string;
  let home: string;
  let outside: string;
  let base: string;

  beforeAll(async () => {
    relay = new ModelRelay(new PriceTable(), { call: () => {}, budgetReached: () => {}, upstreamAllowed: () => false });
    await relay.listen();
    base = `http://127.0.0.1:${relay.port}`;
  });
  afterAll(async () => relay.close());
  beforeEach(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-relay-config-'));
    home = path.join(scratch, 'home');
    outside = path.join(scratch, 'outside');
    fs.mkdirSync(home);
    fs.mkdirSync(outside);
  });
  afterEach(() => fs.rmSync(scratch, { recursive: true, force: true }));

  const run = async (slug: string, credentials: (keyof typeof REAL)[]) => {
    const pod = spec(slug, credentials);
    relay.detach(pod.key);
    const env: Record<string, string> = Object.fromEntries(credentials.map((name) => [name, REAL[name]]));
    const result = await relayAgent(relay, pod, env, home, null);
    relay.detach(pod.key);
    return { ...result, env };
  };
  const read = (file: string) => JSON.parse(fs.readFileSync(path.join(home, file), 'utf8')) as Record<string, unknown>;
  const filesHolding = (secret: string) =>
    fs
      .readdirSync(scratch, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && fs.readFileSync(path.join(e.parentPath, e.name)).includes(secret))
      .map((e) => e.name);

  it('gemini-cli: the API-key method selected in ~/.gemini/settings.json, the template kept; the key only as a placeholder', async () => {
    fs.mkdirSync(path.join(home, '.gemini'));
    fs.writeFileSync(path.join(home, '.gemini/settings.json'), JSON.stringify({ ui: { theme: 'x' }, security: { folderTrust: { enabled: false }, auth: { selectedType: 'oauth-personal' } } }));
    const { args, skipped, env } = await run('gemini-cli', ['GEMINI_API_KEY']);
    expect(skipped).toBeNull();
    expect(args).toEqual([]);
    expect(env.GEMINI_API_KEY).toMatch(PLACEHOLDER);
    expect(env.GOOGLE_GEMINI_BASE_URL).toBe(`${base}/gemini`);
    expect(read('.gemini/settings.json')).toEqual({ ui: { theme: 'x' }, security: { folderTrust: { enabled: false }, auth: { selectedType: 'gemini-api-key' } } });
    expect(filesHolding(REAL.GEMINI_API_KEY)).toEqual([]);
  });

  it("opencode: its built-in provider and the operator's provider reading the credential point at the relay; others are left alone", async () => {
    fs.mkdirSync(path.join(home, '.config/opencode'), { recursive: true });
    const template = {
      model: 'mock/mock-model',
      provider: {
        mock: { npm: '@ai-sdk/openai-compatible', options: { baseURL: 'http://gateway.example/v1', apiKey: '{env:OPENAI_API_KEY}' }, models: { 'mock-model': {} } },
        other: { npm: '@ai-sdk/openai-compatible', options: { baseURL: 'http://other.example/v1', apiKey: '{env:OTHER_KEY}' } },
      },
    };
    fs.writeFileSync(path.join(home, '.config/opencode/opencode.json'), JSON.stringify(template));
    const { args, skipped, env } = await run('opencode', ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY']);
    expect(skipped).toBeNull();
    expect(args).toEqual([]);
    expect(env.OPENAI_API_KEY).toMatch(PLACEHOLDER);
    expect(env.ANTHROPIC_API_KEY).toMatch(PLACEHOLDER);
    const config = read('.config/opencode/opencode.json');
    expect(config.model).toBe('mock/mock-model');
    expect(config.provider).toEqual({
      mock: { ...template.provider.mock, options: { baseURL: `${base}/openai`, apiKey: '{env:OPENAI_API_KEY}' } },
      other: template.provider.other,
      openai: { options: { baseURL: `${base}/openai`, apiKey: '{env:OPENAI_API_KEY}' } },
      // The AI SDK's Anthropic base URL carries the API version.
      anthropic: { options: { baseURL: `${base}/anthropic/v1`, apiKey: '{env:ANTHROPIC_API_KEY}' } },
    });
    expect(filesHolding(REAL.OPENAI_API_KEY)).toEqual([]);
    expect(filesHolding(REAL.ANTHROPIC_API_KEY)).toEqual([]);
  });

  it('codex: the relay provider block as -c arguments (nothing written), its key read from the placeholder variable', async () => {
    const { args, skipped, env } = await run('codex', ['OPENAI_API_KEY']);
    expect(skipped).toBeNull();
    expect(fs.readdirSync(home)).toEqual([]);
    expect(env.OPENAI_BASE_URL).toBe(`${base}/openai`);
    expect(args).toEqual([
      '-c', 'model_provider="drover-relay"',
      '-c', 'model_providers.drover-relay.name="Drover relay"',
      '-c', `model_providers.drover-relay.base_url="${base}/openai"`,
      '-c', 'model_providers.drover-relay.env_key="OPENAI_API_KEY"',
      '-c', 'model_providers.drover-relay.wire_api="responses"',
      '-c', 'model_providers.drover-relay.supports_websockets=false',
    ]); // prettier-ignore
    expect(args.join(' ')).not.toContain(REAL.OPENAI_API_KEY);
  });

  it('a pod without a model credential: nothing changed', async () => {
    const { args, skipped, env } = await run('opencode', []);
    expect({ args, skipped, env }).toEqual({ args: [], skipped: null, env: {} });
    expect(fs.readdirSync(home)).toEqual([]);
  });

  const FILES = { 'gemini-cli': ['.gemini/settings.json', 'GEMINI_API_KEY'], opencode: ['.config/opencode/opencode.json', 'OPENAI_API_KEY'] } as const;
  for (const slug of ['gemini-cli', 'opencode'] as const) {
    for (const kind of [...PLANTS, 'not-json' as const]) {
      it(`${slug}: ${kind} at ${FILES[slug][0]} → nothing changed outside HOME, no hang, the reason said`, async () => {
        const [file, credential] = FILES[slug];
        const target = path.join(home, file);
        const victim = path.join(outside, 'victim.json');
        fs.writeFileSync(victim, '{"kept": true}\n', { mode: 0o600 });
        if (kind !== 'not-json') plant(target, kind, outside, victim);
        else {
          fs.mkdirSync(path.dirname(target), { recursive: true });
          fs.writeFileSync(target, '// comments\n{}');
        }
        const { skipped, env } = await run(slug, [credential]);
        expect(skipped).toMatch(new RegExp(`in the pod's HOME, so ${slug} was not configured for the model relay$`));
        expect(fs.readdirSync(outside)).toEqual(['victim.json']); // nothing created-by-runner.json
        expect(fs.readFileSync(victim, 'utf8')).toBe('{"kept": true}\n');
        // The key is still only a placeholder.
        expect(env[credential]).toMatch(PLACEHOLDER);
      });
    }
  }
});

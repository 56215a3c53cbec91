import fs from 'node:fs';

type Flags = Record<string, string | boolean | undefined>;

const str = (value: string | boolean | undefined): string | undefined => (typeof value === 'string' ? value : undefined);
const seg = (value: string | boolean | undefined) => encodeURIComponent(str(value)!);

/** `--layer-file PATH` (the agentfile lines read from a file) or `--layer TEXT`. */
function layer(f: Flags): string | undefined {
  if (f.layer !== undefined && f['layer-file'] !== undefined) throw new Error('give --layer or --layer-file, not both');
  if (f['layer-file'] !== undefined) return fs.readFileSync(str(f['layer-file'])!, 'utf8');
  return str(f.layer);
}

/** `drover admin presets …` (docs/api.md "Presets"): the shape of the other admin commands (cli/admin.ts). */
export const PRESET_COMMANDS = {
  'presets create': {
    summary: 'create a preset: an agent and agentfile lines (ENV, CREDENTIAL, CONFIG, ALLOW) pods and loops name with --preset',
    required: ['org', 'name', 'agent'],
    optional: ['description', 'layer', 'layer-file'],
    method: 'POST' as const,
    path: (f: Flags) => `/orgs/${seg(f.org)}/presets`,
    body: (f: Flags) => ({ name: f.name, agent_slug: f.agent, description: f.description, agentfile_layer: layer(f) }),
  },
  'presets list': { summary: 'list presets', required: ['org'], method: 'GET' as const, path: (f: Flags) => `/orgs/${seg(f.org)}/presets` },
  'presets get': { summary: 'show a preset', required: ['org', 'name'], method: 'GET' as const, path: (f: Flags) => `/orgs/${seg(f.org)}/presets/${seg(f.name)}` },
  'presets update': {
    summary: "change a preset's agent, lines or description (loops using it get the change from their next run)",
    required: ['org', 'name'],
    optional: ['agent', 'description', 'layer', 'layer-file'],
    oneOf: ['agent', 'description', 'layer', 'layer-file'],
    method: 'PUT' as const,
    path: (f: Flags) => `/orgs/${seg(f.org)}/presets/${seg(f.name)}`,
    body: (f: Flags) => ({ agent_slug: f.agent, description: f.description, agentfile_layer: layer(f) }),
  },
  'presets delete': {
    summary: 'delete a preset (refused while loops use it)',
    required: ['org', 'name'],
    method: 'DELETE' as const,
    path: (f: Flags) => `/orgs/${seg(f.org)}/presets/${seg(f.name)}`,
  },
};

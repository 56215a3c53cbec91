import { Type } from 'typebox';
import type { PresetRow } from '../../store/schema.ts';
import { Nullable, PresetName, Text, Timestamp, iso } from './common.ts';

export const Preset = Type.Object({
  name: Type.String(),
  description: Nullable(Type.String()),
  agent_slug: Type.String(),
  agentfile_layer: Nullable(Type.String({ description: 'ENV, CREDENTIAL, CONFIG (and ALLOW) lines; a pod or loop naming the preset gets them under its own' })),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const PresetList = Type.Object({ presets: Type.Array(Preset) });
export const PresetEnvelope = Type.Object({ preset: Preset });

const Layer = Text({
  maxLength: 32 * 1024,
  description: 'agentfile lines a team shares: ENV, CREDENTIAL, CONFIG (and ALLOW); PROMPT, MODE, REPO and BRANCH are 400 (they belong to each pod or loop)',
});
const Description = Text({ maxLength: 1000 });
const AgentSlug = Text({ minLength: 1, maxLength: 100, description: 'a built-in agent or a custom agent of the organization' });

export const CreatePresetBody = Type.Object(
  { name: PresetName, description: Type.Optional(Nullable(Description)), agent_slug: AgentSlug, agentfile_layer: Type.Optional(Nullable(Layer)) },
  { additionalProperties: false },
);
export const UpdatePresetBody = Type.Object(
  { description: Type.Optional(Nullable(Description)), agent_slug: Type.Optional(AgentSlug), agentfile_layer: Type.Optional(Nullable(Layer)) },
  { additionalProperties: false, minProperties: 1 },
);

export const presetView = (row: PresetRow) => ({
  name: row.name,
  description: row.description,
  agent_slug: row.agent_slug,
  agentfile_layer: row.agentfile_layer,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
});

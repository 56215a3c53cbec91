import { ApiError, DroverClient, ORG_BASE } from '../../../client/index.ts';
import { UsageError, read, type Command } from '../framework.ts';
import { DEFAULT_PROFILE, configPath, saveProfile } from '../profiles.ts';

export const loginCommand: Command = {
  name: 'login',
  summary: 'Check an API key against a server and store it as a profile (the one used from then on).',
  options: {
    server: { type: 'string', value: 'URL', description: "the server's base URL, e.g. http://127.0.0.1:7070; required" },
    org: { type: 'string', value: 'ORG', description: "the organization's slug; required" },
    'api-key': { type: 'string', value: 'KEY', description: 'the API key (drv_…); default $DROVER_API_KEY' },
  },
  notes: [
    `Profiles live in $XDG_CONFIG_HOME/drover/config.json (default ~/.config/drover/config.json), mode 0600. --profile NAME stores`,
    `this one under NAME (default "${DEFAULT_PROFILE}"); the profile stored last is used when no --profile is given.`,
    'The key is checked with one request: a key that is unknown, expired or revoked (401), or an organization it does not belong to (404), is refused.',
  ],
  examples: ['drover login --server http://127.0.0.1:7070 --org default --api-key "$(cat .drover/bootstrap-api-key)"', 'drover login --server https://drover.example.com --org acme --api-key drv_… --profile acme'],
  async run(ctx, p) {
    const server = read.string(p, 'server');
    const org = read.string(p, 'org');
    const apiKey = read.string(p, 'api-key') ?? ctx.env.DROVER_API_KEY;
    if (!server || !org || !apiKey) throw new UsageError('--server, --org and --api-key are required');
    if (!/^https?:\/\/[^\s/]+/.test(server)) throw new UsageError(`--server must be an http(s) URL, got "${server}"`);
    const client = new DroverClient({ server, org, apiKey });
    try {
      await client.call(client.api.GET(`${ORG_BASE}/tickets`, { params: { path: client.path, query: { limit: 1 } } }));
    } catch (error) {
      // A valid key of this organization without tickets:read is fine: 403 comes after 401 and 404.
      if (!(error instanceof ApiError && error.code === 'INSUFFICIENT_SCOPE')) throw error;
    }
    const name = read.string(p, 'profile') ?? DEFAULT_PROFILE;
    const file = configPath(ctx.env);
    saveProfile(file, name, { server: client.server, org, api_key: apiKey });
    ctx.out.write(ctx.json ? `${JSON.stringify({ profile: name, server: client.server, org, config: file })}\n` : `Logged in to ${org} at ${client.server} as profile "${name}" (${file}).\n`);
  },
};

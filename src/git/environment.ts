/**
 * The environment git runs with, wherever Drover runs it (the server's git provider, the runner's
 * workspaces): the operator's transport settings kept, everything else of git's own configuration
 * reset. The token never appears in argv (which `ps` shows to every user): for http(s) remotes it
 * travels as `http.<url>.extraHeader = Authorization: Basic base64("x-access-token:<token>")`,
 * scoped to that URL, through GIT_CONFIG_COUNT/KEY/VALUE (readable only by our own user).
 * Credential helpers and askpass programs are reset (no stored credential is used, the token is
 * never saved) and GIT_TERMINAL_PROMPT=0 forbids prompting.
 */
/** Git's own environment variables worth keeping from ours (transport setup of the operator). */
const KEPT_GIT_VARS = new Set([
  'GIT_EXEC_PATH',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_SSH_VARIANT',
  'GIT_SSL_CAINFO',
  'GIT_SSL_CAPATH',
  'GIT_SSL_CERT',
  'GIT_SSL_KEY',
  'GIT_SSL_NO_VERIFY',
  'GIT_PROXY_COMMAND',
  'GIT_HTTP_PROXY_AUTHMETHOD',
]);

const isHttpUrl = (url: string): boolean => /^https?:\/\//i.test(url);

/** The environment for git against `url`, carrying `token` (empty: none) as described above. */
export function gitEnv(url: string, token: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    // Drop GIT_DIR, GIT_ASKPASS, GIT_CONFIG_*, GIT_TRACE*, GIT_CURL_VERBOSE and the like.
    if (k.startsWith('GIT_') && !KEPT_GIT_VARS.has(k)) continue;
    if (k === 'SSH_ASKPASS' || k === 'LANGUAGE' || k.startsWith('LC_')) continue;
    env[k] = v;
  }
  const config: [string, string][] = [
    ['credential.helper', ''], // empty value resets the list of helpers
    ['core.askPass', ''],
    ['protocol.ext.allow', 'never'],
    ['http.extraHeader', ''], // empty value resets headers configured elsewhere
  ];
  if (token !== '' && isHttpUrl(url)) {
    const basic = Buffer.from(`x-access-token:${token}`, 'utf8').toString('base64');
    config.push([`http.${url}.extraHeader`, `Authorization: Basic ${basic}`]);
  }
  config.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  env.GIT_CONFIG_COUNT = String(config.length);
  env.GIT_TERMINAL_PROMPT = '0';
  env.LC_ALL = 'C'; // English messages, which classify() reads
  return env;
}

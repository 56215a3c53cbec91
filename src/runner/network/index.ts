/**
 * The network walls of a runner's pods (docs/runners.md "Network"). Each sandboxed pod has its
 * own network namespace (`--unshare-net`: a loopback of its own, no route out) and reaches
 * beyond it only through what is exposed to it (./expose.ts): its egress proxy (./proxy.ts,
 * filtered by ./policy.ts), the Drover API, and the operator's allowed loopback services.
 */
import path from 'node:path';
import { parseHostList, parseHostPattern, type HostPattern } from '../../net/host-pattern.ts';
import { modelHosts } from '../../agents/model-hosts.ts';
import { isBuiltinAgentSlug } from '../../agents/builtin.ts';
import { EndpointRoom, bridgedCommand, type EndpointTarget } from './expose.ts';
import { PodProxy } from './proxy.ts';
import type { NetworkMode, NetworkPolicy } from './policy.ts';

export { NETWORK_MODES, type NetworkMode } from './policy.ts';
export type { EndpointTarget } from './expose.ts';

/** The in-pod port of the egress proxy (moved up when an allowed loopback service has it). */
const PROXY_PORT = 3128;
/** Where the Drover API is exposed when its URL is not a loopback one (which keeps its own port). */
const API_PORT = 41_100;
/** Where other runner-side endpoints (the model relay) are exposed by default. */
const ENDPOINT_PORT = 41_200;

export interface RunnerNetworkOptions {
  /** `<work dir>/net`: one directory per pod, bound read-only into its sandbox. */
  dir: string;
  /** The `socat` program on the runner's PATH. */
  socat: string;
  /** The operator's `--allow-host` list (exact hosts; the only one that may name loopback/private). */
  operatorAllow: readonly HostPattern[];
  /** The server URLs the runner connects to: reachable through the proxy as if operator-allowed. */
  servers: readonly string[];
}

export interface PodNetworkSpec {
  key: string;
  mode: NetworkMode;
  /** The organization's `network_allow` and the pod's ALLOW lines, as the server sent them. */
  allow: readonly string[];
  agentSlug: string;
  /** Whether the agent is a built-in one (then its model hosts are allowed). */
  builtin: boolean;
  /** The pod's DROVER_API_URL as the server gave it. */
  apiUrl: string;
}

const isLoopbackHost = (host: string) => host === 'localhost' || host === '::1' || /^127\./.test(host);

function urlPattern(raw: string): HostPattern | null {
  try {
    const url = new URL(raw);
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    const parsed = parseHostPattern(`${url.hostname}:${port}`, { wildcards: false });
    return typeof parsed === 'string' ? null : parsed;
  } catch {
    return null;
  }
}

/** Parses the operator's list (`--allow-host`, repeatable and comma-separated); throws naming a bad entry. */
export function parseOperatorAllow(values: readonly string[]): HostPattern[] {
  const entries = values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  const parsed = parseHostList(entries, { wildcards: false });
  if ('problem' in parsed) throw new Error(`--allow-host ${parsed.problem}`);
  return parsed.patterns;
}

/** One pod's walls: its proxy, its exposed endpoints, the environment that points at them. */
export class PodNetwork {
  refused = 0;
  private readonly named = new Map<string, number>();
  private constructor(
    readonly room: EndpointRoom,
    readonly mode: NetworkMode,
    /** What the agent's environment gets (proxy variables, DROVER_API_URL); overrides the pod's ENV. */
    readonly env: Record<string, string>,
    private readonly proxy: PodProxy | null,
    private readonly socat: string,
  ) {}

  static async open(runner: RunnerNetworkOptions, spec: PodNetworkSpec, onRefused: (host: string, port: number, first: boolean) => void): Promise<PodNetwork> {
    const room = new EndpointRoom(path.join(runner.dir, spec.key));
    const env: Record<string, string> = {};
    let proxy: PodProxy | null = null;
    let network: PodNetwork | null = null;
    try {
      // The operator's loopback services keep their address: NO_PROXY sends 127.0.0.1 direct.
      // (Ports below 1024 cannot be bound by the agent's user: those are reached through the proxy.)
      // `CONFIG network = none`: the Drover API only.
      const loopback = spec.mode === 'none' ? [] : runner.operatorAllow.filter((p) => isLoopbackHost(p.host) && p.port >= 1024);
      for (const p of loopback) if (!room.has(p.port)) await room.expose(p.port, { host: p.host === 'localhost' ? '127.0.0.1' : p.host, port: p.port });
      const api = new URL(spec.apiUrl);
      const apiPort = api.port ? Number(api.port) : api.protocol === 'https:' ? 443 : 80;
      const apiHost = api.hostname.replace(/^\[|\]$/g, '');
      // A loopback API keeps its address (and its own TLS, piped as it is); another is served
      // in the pod as plain HTTP on API_PORT, the runner speaking TLS to it when its URL says so.
      const local = isLoopbackHost(apiHost) && apiPort >= 1024;
      const apiTarget: EndpointTarget = local
        ? { host: apiHost === 'localhost' ? '127.0.0.1' : apiHost, port: apiPort }
        : { host: apiHost, port: apiPort, ...(api.protocol === 'https:' ? { tls: { servername: apiHost } } : {}) };
      const apiBridge = local ? apiPort : room.freePort(API_PORT);
      env.DROVER_API_URL = local ? spec.apiUrl : `http://127.0.0.1:${apiBridge}${api.pathname.replace(/\/+$/, '')}`;
      if (spec.mode !== 'none') {
        const trusted = [...runner.operatorAllow, ...[spec.apiUrl, ...runner.servers].map(urlPattern).filter((p): p is HostPattern => p !== null)];
        const listed = [...spec.allow, ...(spec.builtin && isBuiltinAgentSlug(spec.agentSlug) ? modelHosts(spec.agentSlug) : [])];
        const allow = listed.map((e) => parseHostPattern(e)).filter((p): p is HostPattern => typeof p !== 'string');
        const policy: NetworkPolicy = { mode: spec.mode, allow, trusted };
        proxy = new PodProxy(policy, { onRefused: (host, port, first) => {
          if (network) network.refused++;
          onRefused(host, port, first);
        } });
      }
      // One in-pod bridge serves the API and the egress proxy, told apart per connection by its
      // first request line (./expose.ts `proxyRequest`): one socat to start per pod, not two. When
      // the operator's list already exposes the API's own port, the proxy gets a port of its own.
      let proxyPort: number | null = null;
      if (room.has(apiBridge)) {
        if (proxy) await room.expose((proxyPort = room.freePort(PROXY_PORT)), proxy.server);
      } else {
        await room.expose(apiBridge, proxy ? { proxy: proxy.server, otherwise: apiTarget } : apiTarget);
        if (proxy) proxyPort = apiBridge;
      }
      if (proxyPort !== null) {
        const url = `http://127.0.0.1:${proxyPort}`;
        for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
          env[name] = url;
          env[name.toLowerCase()] = url;
        }
        env.NO_PROXY = env.no_proxy = 'localhost,127.0.0.1';
      }
      network = new PodNetwork(room, spec.mode, env, proxy, runner.socat);
      return network;
    } catch (error) {
      await room.close().catch(() => {});
      throw error;
    }
  }

  /**
   * Exposes a runner-side endpoint at `http://127.0.0.1:<port>` in the pod, before the agent starts,
   * and answers the port: `port` when given (it must be free), else the first free one from 41200.
   * With `name`, once per pod: a later call answers the first one's port (autopilot iterations).
   */
  async expose(target: EndpointTarget, options: { port?: number; name?: string } = {}): Promise<number> {
    const known = options.name === undefined ? undefined : this.named.get(options.name);
    if (known !== undefined) return known;
    const port = options.port ?? this.room.freePort(ENDPOINT_PORT);
    await this.room.expose(port, target);
    if (options.name !== undefined) this.named.set(options.name, port);
    return port;
  }

  /** The command line that starts the in-pod bridges, waits for them, then runs `command args`. */
  wrap(command: string, args: readonly string[]): { command: string; args: string[] } {
    return bridgedCommand(this.socat, this.room.bridges, command, args);
  }

  async close(): Promise<void> {
    this.proxy?.destroyAll();
    await this.room.close();
  }
}

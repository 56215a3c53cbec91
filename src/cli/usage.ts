/**
 * `drover --help`: every command, option and environment variable there is. A test reads the
 * sources for `DROVER_…` names and parseArgs options and fails when one is missing here.
 */
export const SERVE_USAGE = `Usage: drover serve [--host H] [--port P] [--data-dir D] [--no-local-runner]

Runs the server: the API, the runner gateway, the loop scheduler and the webhook sender. With no
DATABASE_URL it keeps everything in SQLite in the data directory and starts a local runner.

Options:
  --host HOST            address to listen on (default $DROVER_HOST or 127.0.0.1)
  --port PORT            port (default $DROVER_PORT or 7070; 0 picks a free one)
  --data-dir DIR         data directory (default $DROVER_DATA_DIR or ./.drover)
  --no-local-runner      do not start the local runner (DROVER_LOCAL_RUNNER=false)
  --version              print the version this server runs
  -h, --help             show this help

The server's environment variables are listed by "drover --help".`;

export const RUNNER_USAGE = `Usage: drover runner --server URL[,URL…] --token TOKEN [options]

Runs a runner: it registers once with the registration token, then keeps its own credential in
its work directory and dials out to the server (it works behind NAT). SIGTERM drains it.

Options:
  --server URL[,URL…]    the server (default $DROVER_SERVER_URL); required. Several URLs: replicas
                         of one server, tried in turn when a connection fails or is lost
  --token TOKEN          a registration token (default $DROVER_RUNNER_TOKEN); needed only the first time
  --name NAME            the runner's name (default: the host name)
  --labels A,B           labels
  --max-pods N           pods at once (default 4)
  --work-dir DIR         work directory: credential, workspaces, clone cache (default $DROVER_RUNNER_WORK_DIR or ./.drover-runner)
  --drain-seconds N      on SIGTERM, how long running pods may go on (default 60)
  --prices FILE          model prices (JSON, USD per million tokens) over the maintained table
                         (or DROVER_RUNNER_PRICES; docs/agents.md)
  --sandbox bwrap|none   how agents run (default $DROVER_RUNNER_SANDBOX or bwrap: in a bubblewrap
                         sandbox that sees only the pod's workspace and HOME; none: unsandboxed)
  --allow-host H[:P]     a host pods may reach besides the Drover server, their agent's model API and
                         their organization's list (repeatable or comma-separated; port default 443;
                         the only list that may name loopback or private addresses)
  --pod-memory-mb N      each pod's memory default and maximum, /tmp and /dev/shm included (4096)
  --pod-pids N           each pod's process default and maximum (1024)
  --pod-cpus N           each pod's CPU default and maximum, e.g. 2 or 0.5 (default: none)
  --pod-disk-mb N        each pod's workspace + HOME default and maximum (20480)
  --version              print the version this runner runs
  -h, --help             show this help

Credentials for agents (CREDENTIAL NAME in an agentfile) come from <work dir>/credentials.json
({"NAME": "value"}) and DROVER_CREDENTIAL_<NAME> variables. Each pod's HOME is a copy of
<work dir>/agent-home/ (agents' configuration files).`;

export const TOP_USAGE = `drover: a control plane for AI coding agents

Usage: drover <command> [options]        drover <command> --help for its options

Server and runners:
  drover serve [options]             run the server (API, runner gateway, scheduler, webhooks)
  drover runner --server URL --token TOKEN [options]
                                     run a runner that executes pods on this machine
  drover admin <resource> <action>   organizations, API keys, users, repositories, runner
                                     tokens, custom agents, presets (drover admin --help)

API client:
  drover login --server URL --org ORG --api-key KEY [--profile NAME]
                                     check an API key and store it as a profile
  drover tickets  list|get|create|update|status|delete|board
  drover pods     list|get|run|logs|terminate
  drover loops    list|get|create|update|delete|enable|disable|trigger|runs|run|cancel
  drover channels list|get|create|update|messages|post|tail
  drover runners  list|get|pods
  drover repos    list|get|branches|mrs
  drover users    list
  drover presets  list
  drover whoami                      the credential in use: its person, key or pod, scopes
  drover activity                    page through the event log: who did what (GET /activity)
  drover events                      print the organization's events as they happen

Agents:
  drover mcp                         a Model Context Protocol server over stdio: Drover's tools
                                     for an agent (docs/mcp.md; drover mcp --help)

  drover version, drover --version   print the version
  drover help, drover --help         this help

Options of the client commands: --json (the API's JSON unchanged), --profile NAME, -h/--help.
Exit codes of the client commands: 0 success; 1 the API answered an error (code, message and
request_id on stderr); 2 usage error; 3 the server could not be reached (URL and cause on stderr);
4 pods run --follow / loops trigger --wait: the pod or run did not complete (the agent's own exit
code where it has one).

Options of serve: --host, --port, --data-dir, --no-local-runner (drover serve --help)
Options of runner: --server, --token, --name, --labels, --max-pods, --work-dir, --drain-seconds, --sandbox,
  --pod-memory-mb, --pod-pids, --pod-cpus, --pod-disk-mb, --prices, --allow-host
Options of admin: --server, --admin-token, --data-dir and each action's own (drover admin --help)

Environment of the client commands:
  DROVER_API_URL          the server's base URL (overrides the profile)
  DROVER_ORG              the organization (overrides the profile)
  DROVER_API_KEY          the API key (overrides the profile)
  DROVER_POD_TOKEN        used as the key when DROVER_API_KEY is unset (inside a pod)
  DROVER_GIT_ACCESS_TOKEN your Git provider token for "repos branches"
  XDG_CONFIG_HOME         where drover/config.json is kept (default ~/.config)

Environment of serve:
  DATABASE_URL            postgres://… for PostgreSQL (any number of replicas); unset: SQLite in the data dir
  DROVER_HOST, DROVER_PORT, DROVER_DATA_DIR   as --host, --port, --data-dir
  DROVER_LOCAL_RUNNER     true/false: start the local runner (default: true on SQLite, false on PostgreSQL)
  DROVER_LOCAL_RUNNER_MAX_PODS    slots of the local runner (4)
  DROVER_LOCAL_RUNNER_START_WAIT_SECONDS  how long serve waits for its local runner before it goes on
                                  (30); it says "Local runner N connected" whenever it connects
  DROVER_LOCAL_RUNNER_SANDBOX     bwrap/none: how the local runner sandboxes its pods (bwrap)
  DROVER_LOCAL_RUNNER_ALLOW_HOSTS host[:port],…: what the local runner's pods may reach besides the
                                  usual (the only list that may name loopback or private addresses)
  DROVER_LOCAL_RUNNER_POD_MEMORY_MB, DROVER_LOCAL_RUNNER_POD_PIDS, DROVER_LOCAL_RUNNER_POD_CPUS,
  DROVER_LOCAL_RUNNER_POD_DISK_MB   the local runner's pod limits (as drover runner --pod-*)
  DROVER_ADMIN_TOKEN      the admin token (default: generated into <data dir>/admin-token)
  DROVER_SECRET_KEY       32 bytes, base64 or hex, encrypting stored tokens (default: <data dir>/secret-key)
  DROVER_DASHBOARD        true/false: serve the web dashboard at / (true)
  DROVER_PUBLIC_URL       the base URL agents call back on (default: the listening address)
  DROVER_RATE_LIMIT_PER_MINUTE    requests per minute per API key (1200; 0 turns it off)
  DROVER_AUTH_FAILURE_LIMIT_PER_MINUTE    failed authentications per client address, then 429 (30; 0 turns it off)
  DROVER_REGISTER_LIMIT_PER_MINUTE        runner registrations per client address (30; 0 turns it off)
  DROVER_REQUEST_TIMEOUT_MS       a request's headers and body must arrive within this, else 408 (30000)
  DROVER_TRUST_PROXY      true, or the proxies' addresses: take the client address from X-Forwarded-For (false)
  DROVER_LOG_LEVEL        pino level (info)
  DROVER_LOG_FORMAT       auto (readable on a terminal, JSON otherwise), json or pretty
  DROVER_PROVIDER_TIMEOUT_MS      budget of one Git provider call (10000)
  DROVER_POD_ORPHAN_GRACE_SECONDS runner silence before its pods are orphaned (120)
  DROVER_POD_ORPHAN_FAIL_SECONDS  runner silence before orphaned pods fail (3600)
  DROVER_SWEEP_INTERVAL_MS        how often liveness and deadlines are checked (5000)
  DROVER_CRON_CATCHUP_SECONDS     after downtime, only a missed slot younger than this fires (3600)
  DROVER_CRON_TICK_MS     how often due cron slots are looked for (1000)
  DROVER_CRON_PREPARE_AHEAD_MS    how long before its slot a loop's run is prepared, its agent started at the slot (30000; 0: at the slot)
  DROVER_DEFAULT_AGENT    the agent of loops that name none (claude-code)
  DROVER_WEBHOOK_ALLOW_PRIVATE    true: callbacks may reach loopback and private addresses (false)
  DROVER_POD_QUEUE_TIMEOUT_MINUTES        a pod waiting for a runner fails after this long (60)
  DROVER_ORG_MAX_COST_USD_PER_MONTH       organizations' model spend per month when their quota sets none (0: none)
  DROVER_EVENT_RETENTION_HOURS            how long the event log keeps events (720: 30 days; GET /activity, resuming streams)
  DROVER_MAX_STREAMS_PER_KEY      concurrent event and output streams per API key or pod token (20; 0: no cap)
  DROVER_MAX_STREAMS_PER_ORG      concurrent event and output streams per organization (500; 0: no cap)
  DROVER_ORG_MAX_ACTIVE_PODS      an organization's active pods; more wait queued (100; 0: no limit)
  DROVER_ORG_MAX_QUEUED_PODS      an organization's queued pods; more are 429 (1000; 0: no limit)
  DROVER_ORG_MAX_LOOPS    an organization's loops; more are 429 (500; 0: no limit)
  DROVER_POD_OUTPUT_BYTES_PER_SEC a pod's output rate; the excess is dropped (1048576; 0: no limit)
  DROVER_TEST_CRON_CLOCK_FILE     tests only: the cron scheduler reads "now" (epoch ms) from this file

Environment of runner:
  DROVER_SERVER_URL       as --server (also the server of "drover admin")
  DROVER_RUNNER_TOKEN     as --token
  DROVER_RUNNER_WORK_DIR  as --work-dir
  DROVER_RUNNER_HEARTBEAT_MS      heartbeat interval (10000)
  DROVER_RUNNER_SANDBOX   as --sandbox
  DROVER_RUNNER_ALLOW_HOSTS       as --allow-host (comma-separated)
  DROVER_RUNNER_PRICES    as --prices
  DROVER_RUNNER_POD_MEMORY_MB     as --pod-memory-mb
  DROVER_RUNNER_POD_PIDS  as --pod-pids
  DROVER_RUNNER_POD_CPUS  as --pod-cpus
  DROVER_RUNNER_POD_DISK_MB       as --pod-disk-mb
  DROVER_RUNNER_CGROUP    a delegated cgroup v2 directory for the pods' groups (default: the runner's own group)
  DROVER_BWRAP            the bubblewrap program (default: bwrap on PATH)
  DROVER_SANDBOX_READ_ONLY        more paths pods may read (colon-separated)
  DROVER_SANDBOX_HIDE     more paths pods must not see (colon-separated)
  DROVER_CREDENTIAL_<NAME>        a credential agents may be given (CREDENTIAL NAME)
  DROVER_TRACE_POD_PHASES 1: one log line per pod with the time of each start and end phase (docs/runners.md)

Environment of admin: DROVER_API_URL or DROVER_SERVER_URL, DROVER_ADMIN_TOKEN, DROVER_DATA_DIR (where admin-token is read)

Set for every agent inside a pod: DROVER_API_URL, DROVER_ORG, DROVER_POD_KEY, DROVER_POD_TOKEN,
DROVER_WORKSPACE, DROVER_CHANNEL_ID and DROVER_TICKET_SLUG (when set), DROVER_STATUS_FILE and
DROVER_ITERATION (autopilot), DROVER_PROMPT (custom agents taking the prompt from the environment).

DROVER_DEBUG=1 prints the stack of a start-up error.`;

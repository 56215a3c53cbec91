// Generated from the OpenAPI document by `npm run client` (openapi-typescript): do not edit.
// A test fails when the document changes and this file is not regenerated.
export interface paths {
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The process is up */
        get: operations["getHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The database answers */
        get: operations["getReadiness"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Prometheus metrics: requests, pods, runners, cron lag, webhook outbox, event subscribers */
        get: operations["getMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/orgs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List organizations */
        get: operations["listOrgs"];
        put?: never;
        /** Create an organization */
        post: operations["createOrg"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/orgs/{org}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Rename an organization or change its ticket prefix (new tickets only; existing slugs stay) */
        patch: operations["updateOrg"];
        trace?: never;
    };
    "/api/v1/admin/orgs/{org}/api-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List API keys (never the keys themselves) */
        get: operations["listApiKeys"];
        put?: never;
        /** Issue an API key; the key itself is shown only in this response */
        post: operations["createApiKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/orgs/{org}/api-keys/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke an API key */
        delete: operations["revokeApiKey"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/orgs/{org}/users": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List users */
        get: operations["listUsers"];
        put?: never;
        /** Create a user (ticket assignees are users) */
        post: operations["createUser"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/orgs/{org}/users/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete a user; the tickets assigned to them become unassigned, their API keys revoked */
        delete: operations["deleteUser"];
        options?: never;
        head?: never;
        /** Change a user's name or email */
        patch: operations["updateUser"];
        trace?: never;
    };
    "/api/v1/admin/orgs/{org}/repositories": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List repositories with their configuration (never the token) */
        get: operations["adminListRepositories"];
        put?: never;
        /** Register a repository; its token (for merge requests) is stored encrypted and never returned */
        post: operations["adminCreateRepository"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/orgs/{org}/repositories/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete a repository: 409 while loops or active pods use it; its tickets and channels are detached */
        delete: operations["adminDeleteRepository"];
        options?: never;
        head?: never;
        /** Change a repository; `token` replaces the stored token, `token: null` clears it */
        patch: operations["adminUpdateRepository"];
        trace?: never;
    };
    "/api/v1/admin/orgs/{org}/runner-tokens": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List registration tokens (never the tokens themselves): prefix, labels, uses left, expiry */
        get: operations["listRunnerTokens"];
        put?: never;
        /** Issue a runner registration token (single-use unless `uses` says more); the token is shown only here */
        post: operations["createRunnerToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/orgs/{org}/runner-tokens/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke a registration token (runners it registered keep working) */
        delete: operations["revokeRunnerToken"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/orgs/{org}/agents": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List custom agents */
        get: operations["listCustomAgents"];
        put?: never;
        /** Create a custom agent */
        post: operations["createCustomAgent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/orgs/{org}/agents/{slug}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete a custom agent: 409 while loops name it or pods running it are active */
        delete: operations["deleteCustomAgent"];
        options?: never;
        head?: never;
        /** Change a custom agent (its slug stays); pods started from now on use the new definition */
        patch: operations["updateCustomAgent"];
        trace?: never;
    };
    "/api/v1/admin/orgs/{org}/runners": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List an organization's runners */
        get: operations["adminListRunners"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/orgs/{org}/runners/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete a runner: its credential is revoked at once, its link closed and its active pods failed */
        delete: operations["adminDeleteRunner"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/orgs/{org}/runners/{id}/rotate-credential": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Give a connected runner a new credential over its link; the old one stops working once the runner has stored it */
        post: operations["adminRotateRunnerCredential"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/orgs/{org}/quotas": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** An organization's quotas: its overrides, the server defaults and what applies */
        get: operations["adminGetQuotas"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Change an organization's quotas (null: back to the server default; 0: no limit) */
        patch: operations["adminUpdateQuotas"];
        trace?: never;
    };
    "/api/v1/admin/orgs/{org}/presets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List presets */
        get: operations["adminListPresets"];
        put?: never;
        /** Create a preset */
        post: operations["createPreset"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/orgs/{org}/presets/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a preset */
        get: operations["getPreset"];
        /** Change a preset's agent, lines or description (loops using it get the change from their next run) */
        put: operations["updatePreset"];
        post?: never;
        /** Delete a preset (409 while loops use it) */
        delete: operations["deletePreset"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/runner/register": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Register a runner with a registration token; answers its own credential */
        post: operations["registerRunner"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/tickets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List tickets, newest first */
        get: operations["listTickets"];
        put?: never;
        /** Create a ticket */
        post: operations["createTicket"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/tickets/board": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The board: the five status columns in order, each with its total and top tickets */
        get: operations["getTicketBoard"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/tickets/{slug}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a ticket (slugs match ignoring case) */
        get: operations["getTicket"];
        /** Update a ticket; only the given fields change, null clears assignee_id, parent_slug and description */
        put: operations["updateTicket"];
        post?: never;
        /** Delete a ticket permanently; its sub-tickets are detached, not deleted */
        delete: operations["deleteTicket"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/tickets/{slug}/status": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Set a ticket's status (backlog, todo, in_progress, in_review, done) */
        patch: operations["setTicketStatus"];
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/channels": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List channels, newest first, without their documents; archived ones only with include_archived=true */
        get: operations["listChannels"];
        put?: never;
        /** Create a channel; names are unique per organization ignoring case */
        post: operations["createChannel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/channels/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a channel with its document */
        get: operations["getChannel"];
        /** Update a channel; only the given fields change, null clears description and document, archived archives or unarchives */
        put: operations["updateChannel"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/channels/{id}/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List messages, most recent first; page with before/after message ids */
        get: operations["listChannelMessages"];
        put?: never;
        /** Send a message; its sender_type comes from the caller (an API key sends as api) */
        post: operations["postChannelMessage"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/repositories": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List repositories, newest first */
        get: operations["listRepositories"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/repositories/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a repository */
        get: operations["getRepository"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/repositories/{id}/branches": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the repository's branches, read live from its provider with the caller's access token
         * @description One of the query parameter `access_token` and the header `X-Git-Access-Token` is required (400 without either; OpenAPI cannot mark two parameters as alternatives). The header wins if both are sent. The token is used for this call only: it is never stored or logged. A token the provider refuses is 400; other provider failures are 502 PROVIDER_ERROR.
         */
        get: operations["listRepositoryBranches"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/repositories/{id}/merge-requests": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the repository's merge (pull) requests, newest first, read live with its stored token
         * @description A `git` repository, or one registered without a token, has none. If the provider fails or refuses the stored token: 502 PROVIDER_ERROR.
         */
        get: operations["listMergeRequests"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/pods": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List pods, newest first */
        get: operations["listPods"];
        put?: never;
        /** Create a pod: an agent run on a runner, or queued until a runner slot frees (status `queued`) */
        post: operations["createPod"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/pods/{key}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a pod */
        get: operations["getPod"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/pods/{key}/output": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The agent's combined output (the last 1 MiB is kept) */
        get: operations["getPodOutput"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/pods/{key}/transcript": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The agent's output read as what it did: its texts, tool calls with their results, errors */
        get: operations["getPodTranscript"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/pods/{key}/patch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The pod's work as `git format-patch` text (kept whatever became of the push); 404 when there is none */
        get: operations["getPodPatch"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/pods/{key}/terminate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Terminate an active pod */
        post: operations["terminatePod"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/runners": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List runners */
        get: operations["listRunners"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/runners/available": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Online runners with free capacity */
        get: operations["listAvailableRunners"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/runners/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a runner */
        get: operations["getRunner"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/runners/{id}/pods": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Pods on a runner, newest first */
        get: operations["listRunnerPods"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Model usage and cost of the pods created in a range, grouped by day, agent, loop, ticket or repository */
        get: operations["getUsage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/loops": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List loops, newest first */
        get: operations["listLoops"];
        put?: never;
        /** Create a loop */
        post: operations["createLoop"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/loops/{slug}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a loop */
        get: operations["getLoop"];
        /** Update a loop; only the given fields change */
        put: operations["updateLoop"];
        post?: never;
        /** Delete a loop and its run history (active runs are cancelled first) */
        delete: operations["deleteLoop"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/loops/{slug}/enable": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Enable a loop (idempotent) */
        post: operations["enableLoop"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/loops/{slug}/disable": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Disable a loop (idempotent); queued runs are cancelled */
        post: operations["disableLoop"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/loops/{slug}/trigger": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start a run now; the run status says what the concurrency policy decided */
        post: operations["triggerLoop"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/loops/{slug}/runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Runs of a loop, most recent first */
        get: operations["listLoopRuns"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/loops/{slug}/runs/{run_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a run */
        get: operations["getLoopRun"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/loops/{slug}/runs/{run_id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Cancel an active run (its pod is terminated) */
        post: operations["cancelLoopRun"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/loops/{slug}/runs/{run_id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A run's callback deliveries and their attempts, newest first */
        get: operations["listLoopRunDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/loops/{slug}/runs/{run_id}/redeliver": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Queue a new delivery of the run's callback event (same body and webhook-id) to the loop's callback_url */
        post: operations["redeliverLoopRun"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/auth/whoami": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The calling credential: an API key or a pod token, and its scopes (any valid credential of the organization may ask) */
        get: operations["whoami"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/activity": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The event log as pages of JSON, newest first, with who made each change (only the types the key may read) */
        get: operations["listActivity"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/users": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The organization's people, for pickers (any credential of the organization) */
        get: operations["listOrgUsers"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/presets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The organization's presets: a named agent and agentfile lines pods and loops start from (any credential of the organization) */
        get: operations["listPresets"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The organization’s live event stream (Server-Sent Events), resumable with Last-Event-ID
         * @description Each event: `id:` (increasing per organization), `event:` (its type) and `data:` one JSON line `{"id","type","created_at","data"}`, `data` holding the resource as the API shows it under its name (`{"ticket": {…}}`, `{"pod": {…}}`, `{"run": {…}}`: the first word of the type). A `: keepalive` comment every 15 s. With Last-Event-ID (or last_event_id) the kept events after that id are replayed first; an id older than what is kept (DROVER_EVENT_RETENTION_HOURS) gets one `reset` event instead. Each type needs its resource’s read scope.
         */
        get: operations["streamEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ext/orgs/{org}/pods/{key}/output/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The agent's output as Server-Sent Events, live while the pod runs
         * @description `output` events `{"offset","data"}` (`offset`: the byte offset of `data` in the whole output) from byte `offset` (default 0; clamped to what is kept, the last 1 MiB), live while the pod runs; then one `end` event `{"status","exit_code"}` and the stream closes.
         */
        get: operations["streamPodOutput"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/orgs/{org}/loops": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List loops, newest first */
        get: operations["listLoopsAtOrgsPrefix"];
        put?: never;
        /** Create a loop */
        post: operations["createLoopAtOrgsPrefix"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/orgs/{org}/loops/{slug}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a loop */
        get: operations["getLoopAtOrgsPrefix"];
        /** Update a loop; only the given fields change */
        put: operations["updateLoopAtOrgsPrefix"];
        post?: never;
        /** Delete a loop and its run history (active runs are cancelled first) */
        delete: operations["deleteLoopAtOrgsPrefix"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/orgs/{org}/loops/{slug}/enable": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Enable a loop (idempotent) */
        post: operations["enableLoopAtOrgsPrefix"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/orgs/{org}/loops/{slug}/disable": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Disable a loop (idempotent); queued runs are cancelled */
        post: operations["disableLoopAtOrgsPrefix"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/orgs/{org}/loops/{slug}/trigger": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start a run now; the run status says what the concurrency policy decided */
        post: operations["triggerLoopAtOrgsPrefix"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/orgs/{org}/loops/{slug}/runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Runs of a loop, most recent first */
        get: operations["listLoopRunsAtOrgsPrefix"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/orgs/{org}/loops/{slug}/runs/{run_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a run */
        get: operations["getLoopRunAtOrgsPrefix"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/orgs/{org}/loops/{slug}/runs/{run_id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Cancel an active run (its pod is terminated) */
        post: operations["cancelLoopRunAtOrgsPrefix"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/orgs/{org}/loops/{slug}/runs/{run_id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A run's callback deliveries and their attempts, newest first */
        get: operations["listLoopRunDeliveriesAtOrgsPrefix"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/orgs/{org}/loops/{slug}/runs/{run_id}/redeliver": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Queue a new delivery of the run's callback event (same body and webhook-id) to the loop's callback_url */
        post: operations["redeliverLoopRunAtOrgsPrefix"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    "loop.run.finished": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A loop run ended (any final status but skipped): POSTed to the loop's callback_url
         * @description Signed per the Standard Webhooks spec with the loop's callback_secret (whsec_…): the signature is `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`. A 2xx answer is a delivery; 410 stops retries; anything else (or no answer within 10 s; redirects are not followed) is retried after 5 s, 5 min, 30 min, 2 h, 5 h and 10 h, with the same webhook-id and body.
         */
        post: operations["loopRunFinished"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        Repository: {
            id: number;
            name: string;
            full_name: string;
            /** @enum {unknown} */
            provider: "github" | "gitlab" | "gitea" | "git";
            url: string;
            default_branch: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            created_at: string;
        };
        AdminRepository: {
            id: number;
            name: string;
            full_name: string;
            /** @enum {unknown} */
            provider: "github" | "gitlab" | "gitea" | "git";
            url: string;
            default_branch: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            created_at: string;
            ticket_prefix: string | null;
            api_base_url: string | null;
            /** @description whether a token for merge requests is stored (it is never returned) */
            has_token: boolean;
        };
        MergeRequest: {
            /** @description the provider's number of the merge (pull) request in the repository */
            id: number;
            title: string;
            /** @enum {unknown} */
            state: "opened" | "merged" | "closed";
            source_branch: string;
            target_branch: string;
            author: string;
            url: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            created_at: string;
        };
        /** Error */
        ErrorBody: {
            /** @description A human sentence */
            error: string;
            /** @enum {unknown} */
            code: "AUTH_REQUIRED" | "INVALID_API_KEY" | "INSUFFICIENT_SCOPE" | "NOT_FOUND" | "VALIDATION_FAILED" | "INVALID_JSON" | "ALREADY_EXISTS" | "LOOP_DISABLED" | "RUN_NOT_ACTIVE" | "POD_NOT_ACTIVE" | "CHANNEL_ARCHIVED" | "RUNNER_UNAVAILABLE" | "IDEMPOTENCY_MISMATCH" | "IDEMPOTENCY_IN_PROGRESS" | "RESOURCE_IN_USE" | "REQUEST_TIMEOUT" | "NO_WEBHOOK_EVENT" | "SPAWN_DEPTH_EXCEEDED" | "TOO_MANY_CHILDREN" | "DELIVERY_PENDING" | "PAYLOAD_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "EXPECTATION_FAILED" | "RATE_LIMITED" | "HEADERS_TOO_LARGE" | "QUOTA_EXCEEDED" | "TOO_MANY_STREAMS" | "INTERNAL" | "PROVIDER_ERROR" | "NO_AVAILABLE_RUNNER" | "SERVICE_UNAVAILABLE";
            /** @description Also sent as the X-Request-Id header; the server log names it */
            request_id: string;
            /** @description validation errors: the field (JSON pointer in a body, name of a parameter) and why */
            details?: {
                field: string;
                message: string;
            }[];
            /** @description on 403 INSUFFICIENT_SCOPE */
            required_scopes?: string[];
        };
        /**
         * JSON value
         * @description Any JSON value; its strings and object keys may not contain U+0000.
         */
        JsonValue: unknown;
        Ticket: {
            id: number;
            slug: string;
            /** @enum {unknown} */
            type: "feature" | "bug" | "task" | "chore" | "improvement";
            title: string;
            /** @enum {unknown} */
            status: "backlog" | "todo" | "in_progress" | "in_review" | "done";
            /** @enum {unknown} */
            priority: "low" | "medium" | "high" | "urgent";
            assignee_id: number | null;
            repository_id: number | null;
            labels: string[];
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            updated_at: string;
            description: string | null;
            parent_slug: string | null;
            created_by: {
                /**
                 * @description user: a person (through a key of theirs); api_key: a key of no one; pod: a pod (its token); loop: a loop (its schedule); admin: the admin token; system: the server itself
                 * @enum {unknown}
                 */
                type: "user" | "api_key" | "pod" | "loop" | "admin" | "system";
                /** @description the user's or key's id, the pod's key, the loop's slug; null for admin and system */
                id: number | string | null;
                /** @description the name at the time of the change */
                name: string;
            } | null;
            updated_by: {
                /**
                 * @description user: a person (through a key of theirs); api_key: a key of no one; pod: a pod (its token); loop: a loop (its schedule); admin: the admin token; system: the server itself
                 * @enum {unknown}
                 */
                type: "user" | "api_key" | "pod" | "loop" | "admin" | "system";
                /** @description the user's or key's id, the pod's key, the loop's slug; null for admin and system */
                id: number | string | null;
                /** @description the name at the time of the change */
                name: string;
            } | null;
        };
        TicketListItem: {
            id: number;
            slug: string;
            /** @enum {unknown} */
            type: "feature" | "bug" | "task" | "chore" | "improvement";
            title: string;
            /** @enum {unknown} */
            status: "backlog" | "todo" | "in_progress" | "in_review" | "done";
            /** @enum {unknown} */
            priority: "low" | "medium" | "high" | "urgent";
            assignee_id: number | null;
            repository_id: number | null;
            labels: string[];
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            updated_at: string;
        };
        BoardTicket: {
            id: number;
            slug: string;
            title: string;
            /** @enum {unknown} */
            type: "feature" | "bug" | "task" | "chore" | "improvement";
            /** @enum {unknown} */
            priority: "low" | "medium" | "high" | "urgent";
            assignee_id: number | null;
            labels: string[];
        };
        Org: {
            id: number;
            slug: string;
            name: string;
            ticket_prefix: string;
            /** @description hosts its pods may reach through their network walls: host[:port] or *.domain[:port], port default 443 (docs/runners.md "Network") */
            network_allow: string[];
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            created_at: string;
        };
        ApiKey: {
            id: number;
            name: string;
            /** @description the first 12 characters of the key, to recognise it */
            prefix: string;
            scopes: ("pods:read" | "pods:write" | "tickets:read" | "tickets:write" | "channels:read" | "channels:write" | "runners:read" | "repos:read" | "loops:read" | "loops:write")[];
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            expires_at: string | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            last_used_at: string | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            revoked_at: string | null;
            /** @description the person the key belongs to (what they do with it names them); null: no one */
            user_id: number | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            created_at: string;
        };
        User: {
            id: number;
            name: string;
            email: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            created_at: string;
        };
        ChannelListItem: {
            id: number;
            name: string;
            description: string | null;
            repository_id: number | null;
            ticket_slug: string | null;
            archived: boolean;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            updated_at: string;
        };
        Channel: {
            id: number;
            name: string;
            description: string | null;
            repository_id: number | null;
            ticket_slug: string | null;
            archived: boolean;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            updated_at: string;
            document: string | null;
        };
        ChannelMessage: {
            id: number;
            channel_id: number;
            content: string;
            /**
             * @description api: an API key of no one; user: a person's API key; agent: a pod token; system: the service itself
             * @enum {unknown}
             */
            sender_type: "api" | "user" | "agent" | "system";
            sender: {
                /**
                 * @description user: a person (through a key of theirs); api_key: a key of no one; pod: a pod (its token); loop: a loop (its schedule); admin: the admin token; system: the server itself
                 * @enum {unknown}
                 */
                type: "user" | "api_key" | "pod" | "loop" | "admin" | "system";
                /** @description the user's or key's id, the pod's key, the loop's slug; null for admin and system */
                id: number | string | null;
                /** @description the name at the time of the change */
                name: string;
            } | null;
            pod_key: string | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            created_at: string;
        };
        Delivery: {
            /**
             * @description pending until the pod ends; pushed; no_changes (no commit, nothing pushed); failed (error says why; the patch is kept)
             * @enum {unknown}
             */
            status: "pending" | "pushed" | "no_changes" | "failed";
            /** @description the branch the work was (or was to be) pushed to */
            branch: string | null;
            /** @description the commit the work started from */
            base_commit: string | null;
            /** @description the last commit of the work */
            head_commit: string | null;
            /** @description the commits of the work, oldest first (at most the last 100) */
            commits: {
                sha: string;
                subject: string;
            }[];
            files_changed: number;
            insertions: number;
            deletions: number;
            /** @description with CONFIG deliver = merge_request, once opened */
            merge_request: {
                id: number;
                url: string;
                /** @enum {unknown} */
                state: "opened" | "merged" | "closed";
            } | null;
            error: string | null;
        };
        PodListItem: {
            key: string;
            /** @enum {unknown} */
            status: "queued" | "initializing" | "running" | "completed" | "failed" | "terminated" | "orphaned";
            agent_slug: string;
            /** @description null while the pod is queued */
            runner_id: number | null;
            prompt: string;
            repository_id: number | null;
            branch: string | null;
            /** @description the agent's final message (at most 64 KiB), null when it gave none */
            result: string | null;
            /** @description the agent's session id, null when it reported none */
            session_id: string | null;
            usage: {
                /** @description input tokens read neither from nor into a prompt cache */
                input_tokens: number | null;
                /** @description output tokens */
                output_tokens: number | null;
                /** @description input tokens read from the prompt cache */
                cache_read_tokens: number | null;
                /** @description input tokens written to the prompt cache */
                cache_write_tokens: number | null;
                /** @description cost in US dollars: the relay's priced sum, or as the agent computed it */
                cost_usd: number | null;
                /** @description model turns of the agent loop (with the relay: its model calls) */
                turns: number | null;
            };
            /** @description while the pod is queued: its place in the organization's queue (1 = the next to get a runner slot); null otherwise */
            queue_position: number | null;
            created_by: {
                /**
                 * @description user: a person (through a key of theirs); api_key: a key of no one; pod: a pod (its token); loop: a loop (its schedule); admin: the admin token; system: the server itself
                 * @enum {unknown}
                 */
                type: "user" | "api_key" | "pod" | "loop" | "admin" | "system";
                /** @description the user's or key's id, the pod's key, the loop's slug; null for admin and system */
                id: number | string | null;
                /** @description the name at the time of the change */
                name: string;
            } | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            updated_at: string;
        };
        Pod: {
            key: string;
            /** @enum {unknown} */
            status: "queued" | "initializing" | "running" | "completed" | "failed" | "terminated" | "orphaned";
            agent_slug: string;
            /** @description null while the pod is queued */
            runner_id: number | null;
            prompt: string;
            repository_id: number | null;
            branch: string | null;
            /** @description the agent's final message (at most 64 KiB), null when it gave none */
            result: string | null;
            /** @description the agent's session id, null when it reported none */
            session_id: string | null;
            usage: {
                /** @description input tokens read neither from nor into a prompt cache */
                input_tokens: number | null;
                /** @description output tokens */
                output_tokens: number | null;
                /** @description input tokens read from the prompt cache */
                cache_read_tokens: number | null;
                /** @description input tokens written to the prompt cache */
                cache_write_tokens: number | null;
                /** @description cost in US dollars: the relay's priced sum, or as the agent computed it */
                cost_usd: number | null;
                /** @description model turns of the agent loop (with the relay: its model calls) */
                turns: number | null;
            };
            /** @description while the pod is queued: its place in the organization's queue (1 = the next to get a runner slot); null otherwise */
            queue_position: number | null;
            created_by: {
                /**
                 * @description user: a person (through a key of theirs); api_key: a key of no one; pod: a pod (its token); loop: a loop (its schedule); admin: the admin token; system: the server itself
                 * @enum {unknown}
                 */
                type: "user" | "api_key" | "pod" | "loop" | "admin" | "system";
                /** @description the user's or key's id, the pod's key, the loop's slug; null for admin and system */
                id: number | string | null;
                /** @description the name at the time of the change */
                name: string;
            } | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            updated_at: string;
            ticket_slug: string | null;
            channel_id: number | null;
            sandbox_type: string | null;
            auto_close: boolean;
            pod_timeout_minutes: number | null;
            max_turns: number | null;
            /** @description `CONFIG max_cost_usd`: what its model calls may cost, checked by the runner's relay before each call (its spend is `usage.cost_usd`); null: no pod budget */
            max_cost_usd: number | null;
            /** @enum {unknown} */
            mode: "direct" | "autopilot";
            alias: string | null;
            /** @description the pod that spawned this one with its pod token (docs/mcp.md); null for pods created with an API key or by a loop */
            parent_pod_key: string | null;
            /** @description the agentfile's ENV variables */
            env: {
                [key: string]: string;
            };
            /** @description what the pod may reach beyond its sandbox */
            network: {
                /**
                 * @description `CONFIG network` (docs/runners.md "Network")
                 * @enum {unknown}
                 */
                mode: "restricted" | "none" | "open";
                /** @description the pod's ALLOW entries (host:port); the organization's network_allow, the agent's model hosts, the Drover server and the runner's --allow-host list apply too */
                allow: string[];
                /** @description connections its network walls refused so far */
                refused: number;
            };
            /** @description only runners carrying all of these could take it */
            runner_labels: string[];
            /** @description the preset it was made from */
            preset: string | null;
            /** @description the agentfile's CONFIG memory_mb, pids, cpus and disk_mb; null: the runner's default (the runner lowers a value over its operator's maximum) */
            limits: {
                memory_mb: number | null;
                pids: number | null;
                cpus: number | null;
                disk_mb: number | null;
            };
            error_message: string | null;
            exit_code: number | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            started_at: string | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            finished_at: string | null;
            delivery: components["schemas"]["Delivery"] | null;
        };
        RunnerPodItem: {
            key: string;
            /** @enum {unknown} */
            status: "queued" | "initializing" | "running" | "completed" | "failed" | "terminated" | "orphaned";
            agent_slug: string;
            runner_id: number | null;
            prompt: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            created_at: string;
        };
        Runner: {
            id: number;
            name: string;
            /** @enum {unknown} */
            status: "online" | "offline" | "draining";
            version: string;
            os: string;
            arch: string;
            labels: string[];
            /** @description How the runner sandboxes its pods: `bwrap` (bubblewrap) or `none` (agents run unsandboxed); null until it has connected. */
            sandbox: ("bwrap" | "none") | null;
            /** @description Which walls the runner puts around each pod (its self-test at start): network namespace with egress proxy, memory, pids and CPU limits (cgroups), disk watch. Null until a runner that reports it connects (older runners do not). */
            isolation: {
                network: boolean;
                memory: boolean;
                pids: boolean;
                cpu: boolean;
                disk: boolean;
            } | null;
            /** @description The agents the runner advertises. */
            agents: {
                slug: string;
                /** @description The program's `--version`, when it says one. */
                version: string | null;
            }[];
            pod_count: number;
            max_pods: number;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            last_heartbeat_at: string | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            created_at: string;
        };
        Loop: {
            id: number;
            slug: string;
            name: string;
            description: string | null;
            agent_slug: string | null;
            custom_agent_slug: string | null;
            prompt_template: string;
            prompt_variables: {
                [key: string]: unknown;
            };
            repository_id: number | null;
            runner_id: number | null;
            branch_name: string | null;
            /** @enum {unknown} */
            execution_mode: "direct" | "autopilot";
            cron_expression: string | null;
            cron_timezone: string;
            /** @enum {unknown} */
            sandbox_strategy: "persistent" | "fresh";
            session_persistence: boolean;
            /** @enum {unknown} */
            concurrency_policy: "skip" | "queue" | "replace";
            max_concurrent_runs: number;
            timeout_minutes: number;
            callback_url: string | null;
            /** @description only for keys holding loops:write */
            callback_secret?: string;
            autopilot_config: {
                max_iterations: number;
                iteration_timeout_sec: number;
            };
            /** @description the agentfile every run's pod gets; null when none */
            agentfile_layer: string | null;
            /** @description only runners carrying all of these run its pods */
            runner_labels: string[];
            /** @description the preset its runs start from (its agent and lines, the loop's own lines on top) */
            preset: string | null;
            /** @description US dollars a day its runs may spend; null: no budget */
            budget_usd_per_day: number | null;
            /** @description what its runs spent on model calls today (UTC) */
            spent_usd_today: number;
            /** @enum {unknown} */
            status: "enabled" | "disabled";
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            next_run_at: string | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            last_run_at: string | null;
            total_runs: number;
            successful_runs: number;
            /** @description runs that failed or timed out */
            failed_runs: number;
            /** @description runs cancelled before they ended */
            cancelled_runs: number;
            active_run_count: number;
            /** @description the sum of its runs' costs (the relay's priced sums, or as their agents reported them); null when none has one */
            total_cost_usd: number | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            updated_at: string;
        };
        Run: {
            id: number;
            loop_id: number;
            loop_slug: string;
            run_number: number;
            /** @enum {unknown} */
            status: "queued" | "pending" | "running" | "completed" | "failed" | "cancelled" | "timeout" | "skipped";
            /** @enum {unknown} */
            trigger_type: "manual" | "cron";
            variables: {
                [key: string]: unknown;
            };
            resolved_prompt: string | null;
            pod_key: string | null;
            runner_id: number | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            scheduled_at: string | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            started_at: string | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            finished_at: string | null;
            duration_sec: number | null;
            error_message: string | null;
            /** @description the agent's final message (at most 64 KiB), null when it gave none */
            result: string | null;
            /** @description the agent's session id, null when it reported none */
            session_id: string | null;
            usage: {
                /** @description input tokens read neither from nor into a prompt cache */
                input_tokens: number | null;
                /** @description output tokens */
                output_tokens: number | null;
                /** @description input tokens read from the prompt cache */
                cache_read_tokens: number | null;
                /** @description input tokens written to the prompt cache */
                cache_write_tokens: number | null;
                /** @description cost in US dollars: the relay's priced sum, or as the agent computed it */
                cost_usd: number | null;
                /** @description model turns of the agent loop (with the relay: its model calls) */
                turns: number | null;
            };
            delivery: components["schemas"]["Delivery"] | null;
            /** @enum {unknown} */
            callback_status: "none" | "pending" | "delivered" | "failed";
            triggered_by: {
                /**
                 * @description user: a person (through a key of theirs); api_key: a key of no one; pod: a pod (its token); loop: a loop (its schedule); admin: the admin token; system: the server itself
                 * @enum {unknown}
                 */
                type: "user" | "api_key" | "pod" | "loop" | "admin" | "system";
                /** @description the user's or key's id, the pod's key, the loop's slug; null for admin and system */
                id: number | string | null;
                /** @description the name at the time of the change */
                name: string;
            } | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            updated_at: string;
        };
        LoopRunFinishedEvent: {
            /** @enum {string} */
            type: "loop.run.finished";
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            timestamp: string;
            data: {
                loop: {
                    id: number;
                    slug: string;
                    name: string;
                };
                run: components["schemas"]["Run"];
            };
        };
        WebhookDelivery: {
            id: number;
            /** @description the `webhook-id` header: the same for the event and its redeliveries */
            webhook_id: string;
            url: string;
            /** @enum {unknown} */
            status: "pending" | "delivered" | "failed";
            attempt_count: number;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            next_attempt_at: string | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            updated_at: string;
            /** @description newest first */
            attempts: {
                /** @description 1 for the first attempt of this delivery */
                attempt: number;
                /**
                 * Format: date-time
                 * @description ISO 8601 UTC with milliseconds
                 */
                attempted_at: string;
                status_code: number | null;
                /** @description why it did not count as delivered (HTTP status, timeout, refused address, …); null on a 2xx */
                error: string | null;
                duration_ms: number;
            }[];
        };
        CustomAgent: {
            id: number;
            slug: string;
            name: string;
            command: string;
            args: string[];
            /** @enum {unknown} */
            prompt_position: "last" | "first" | "stdin" | "env";
            /** Format: date-time */
            created_at: string;
        };
        RunnerToken: {
            id: number;
            /** @description the first 12 characters of the token, to recognise it (null for tokens issued before prefixes were kept) */
            prefix: string | null;
            labels: string[];
            /** @description registrations the token allows in all */
            uses: number;
            uses_left: number;
            /** @enum {unknown} */
            status: "active" | "used" | "revoked" | "expired";
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            expires_at: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            revoked_at: string | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds
             */
            created_at: string;
        };
        /** @description overrides: this organization’s own values (null: the server default); 0 means no limit */
        OrgQuotas: {
            org: string;
            overrides: {
                max_active_pods: number | null;
                max_queued_pods: number | null;
                max_loops: number | null;
                pod_output_bytes_per_sec: number | null;
                max_cost_usd_per_month: number | null;
            };
            defaults: {
                max_active_pods: number;
                max_queued_pods: number;
                max_loops: number;
                pod_output_bytes_per_sec: number;
                max_cost_usd_per_month: number;
            };
            effective: {
                max_active_pods: number;
                max_queued_pods: number;
                max_loops: number;
                pod_output_bytes_per_sec: number;
                max_cost_usd_per_month: number;
            };
        };
    };
    responses: {
        /** @description VALIDATION_FAILED or INVALID_JSON: the query, path, headers or body are invalid (`details` names the fields) */
        Error400: {
            headers: {
                "x-request-id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description AUTH_REQUIRED or INVALID_API_KEY: no key, or an unknown, expired or revoked one */
        Error401: {
            headers: {
                "x-request-id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description INSUFFICIENT_SCOPE: the key lacks the scope (`required_scopes`) */
        Error403: {
            headers: {
                "x-request-id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description NOT_FOUND: the organization, or the addressed resource in it, does not exist */
        Error404: {
            headers: {
                "x-request-id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description PAYLOAD_TOO_LARGE: the body is larger than 1 MiB */
        Error413: {
            headers: {
                "x-request-id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description UNSUPPORTED_MEDIA_TYPE: a body not sent as application/json */
        Error415: {
            headers: {
                "x-request-id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description RATE_LIMITED: too many requests for this key; QUOTA_EXCEEDED: an organization quota (the message names it); TOO_MANY_STREAMS (event and output streams): the key or pod token already holds 20 open streams, or its organization 500; retry after Retry-After seconds */
        Error429: {
            headers: {
                "x-request-id": components["headers"]["X-Request-Id"];
                "retry-after": components["headers"]["Retry-After"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description INTERNAL: an unexpected failure; the request id identifies it in the server log */
        Error500: {
            headers: {
                "x-request-id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description A state conflict (the code says which) */
        Error409: {
            headers: {
                "x-request-id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description PROVIDER_ERROR: the Git provider failed or timed out */
        Error502: {
            headers: {
                "x-request-id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description NO_AVAILABLE_RUNNER: no runner of the organization offers the agent */
        Error503: {
            headers: {
                "x-request-id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: {
        /** @description The id of this request; an error body repeats it as request_id */
        "X-Request-Id": string;
        /** @description Seconds to wait before retrying */
        "Retry-After": number;
        /** @description Present when the response replays an earlier request with the same Idempotency-Key */
        "Idempotent-Replayed": "true";
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "ok";
                    };
                };
            };
        };
    };
    getReadiness: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "ready";
                    };
                };
            };
            /** @description The database does not answer */
            503: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "database unreachable";
                    };
                };
            };
        };
    };
    getMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listOrgs: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        orgs: components["schemas"]["Org"][];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    createOrg: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description lower-case letters, digits and -, 2–63 characters */
                    slug: string;
                    name: string;
                    /** @description upper-case, 1–10 characters, starting with a letter */
                    ticket_prefix?: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        org: components["schemas"]["Org"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    updateOrg: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name?: string;
                    /** @description upper-case, 1–10 characters, starting with a letter */
                    ticket_prefix?: string;
                    /** @description hosts its pods may reach through their network walls: host[:port] or *.domain[:port], port default 443 (docs/runners.md "Network") */
                    network_allow?: string[];
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        org: components["schemas"]["Org"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listApiKeys: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        api_keys: components["schemas"]["ApiKey"][];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    createApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name: string;
                    scopes: ("pods:read" | "pods:write" | "tickets:read" | "tickets:write" | "channels:read" | "channels:write" | "runners:read" | "repos:read" | "loops:read" | "loops:write")[];
                    /** Format: date-time */
                    expires_at?: string;
                    user_id?: number;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        api_key: components["schemas"]["ApiKey"];
                        key: string;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    revokeApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message: string;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listUsers: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        users: components["schemas"]["User"][];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    createUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name: string;
                    /** Format: email */
                    email: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        user: components["schemas"]["User"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    deleteUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message: string;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    updateUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name?: string;
                    /** Format: email */
                    email?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        user: components["schemas"]["User"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    adminListRepositories: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        repositories: components["schemas"]["AdminRepository"][];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    adminCreateRepository: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name: string;
                    /** @description owner/repo (GitHub, Gitea) or group/sub/project (GitLab), 400 otherwise; any name for git */
                    full_name: string;
                    /** @enum {unknown} */
                    provider: "github" | "gitlab" | "gitea" | "git";
                    /** @description clone URL: http(s), ssh:// or user@host:path; for git also file:// or an absolute path */
                    url: string;
                    /**
                     * @description a branch name (no whitespace, no leading -); default main
                     * @default main
                     */
                    default_branch?: string;
                    /** @description upper-case, 1–10 characters, starting with a letter */
                    ticket_prefix?: string;
                    /** @description the provider's API root, an http(s) URL, e.g. https://gitlab.example.com/api/v4; required for gitea, refused for git (400) */
                    api_base_url?: string;
                    /** @description used server-side for merge requests; stored encrypted, never returned */
                    token?: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        repository: components["schemas"]["AdminRepository"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    adminDeleteRepository: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message: string;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    adminUpdateRepository: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name?: string;
                    /** @description owner/repo (GitHub, Gitea) or group/sub/project (GitLab), 400 otherwise; any name for git */
                    full_name?: string;
                    /** @description clone URL: http(s), ssh:// or user@host:path; for git also file:// or an absolute path */
                    url?: string;
                    /** @description a branch name (no whitespace, no leading -); default main */
                    default_branch?: string;
                    /** @description upper-case, 1–10 characters, starting with a letter */
                    ticket_prefix?: string | null;
                    /** @description the provider's API root, an http(s) URL, e.g. https://gitlab.example.com/api/v4; required for gitea, refused for git (400) */
                    api_base_url?: string | null;
                    /** @description used server-side for merge requests; stored encrypted, never returned */
                    token?: string | null;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        repository: components["schemas"]["AdminRepository"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listRunnerTokens: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        runner_tokens: components["schemas"]["RunnerToken"][];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    createRunnerToken: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": {
                    labels?: string[];
                    expires_in_hours?: number;
                    /** @description runners that may register with it (default 1) */
                    uses?: number;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        token: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        expires_at: string;
                        runner_token: components["schemas"]["RunnerToken"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    revokeRunnerToken: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message: string;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listCustomAgents: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        agents: components["schemas"]["CustomAgent"][];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    createCustomAgent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    slug: string;
                    name: string;
                    command: string;
                    args?: string[];
                    /** @enum {unknown} */
                    prompt_position?: "last" | "first" | "stdin" | "env";
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        agent: components["schemas"]["CustomAgent"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    deleteCustomAgent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message: string;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    updateCustomAgent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name?: string;
                    command?: string;
                    args?: string[];
                    /** @enum {unknown} */
                    prompt_position?: "last" | "first" | "stdin" | "env";
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        agent: components["schemas"]["CustomAgent"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    adminListRunners: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        runners: components["schemas"]["Runner"][];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    adminDeleteRunner: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message: string;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    adminRotateRunnerCredential: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message: string;
                        runner: components["schemas"]["Runner"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    adminGetQuotas: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        quotas: components["schemas"]["OrgQuotas"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    adminUpdateQuotas: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        /** @description the quotas to change; null returns one to the server default, 0 means no limit */
        requestBody: {
            content: {
                "application/json": {
                    max_active_pods?: number | null;
                    max_queued_pods?: number | null;
                    max_loops?: number | null;
                    pod_output_bytes_per_sec?: number | null;
                    max_cost_usd_per_month?: number | null;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        quotas: components["schemas"]["OrgQuotas"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    adminListPresets: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        presets: {
                            name: string;
                            description: string | null;
                            agent_slug: string;
                            /** @description ENV, CREDENTIAL, CONFIG (and ALLOW) lines; a pod or loop naming the preset gets them under its own */
                            agentfile_layer: string | null;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            created_at: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            updated_at: string;
                        }[];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    createPreset: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description a preset of the organization (lower-case letters, digits, . _ -; up to 63) */
                    name: string;
                    description?: string | null;
                    /** @description a built-in agent or a custom agent of the organization */
                    agent_slug: string;
                    /** @description agentfile lines a team shares: ENV, CREDENTIAL, CONFIG (and ALLOW); PROMPT, MODE, REPO and BRANCH are 400 (they belong to each pod or loop) */
                    agentfile_layer?: string | null;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        preset: {
                            name: string;
                            description: string | null;
                            agent_slug: string;
                            /** @description ENV, CREDENTIAL, CONFIG (and ALLOW) lines; a pod or loop naming the preset gets them under its own */
                            agentfile_layer: string | null;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            created_at: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            updated_at: string;
                        };
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    getPreset: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                /** @description a preset of the organization (lower-case letters, digits, . _ -; up to 63) */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        preset: {
                            name: string;
                            description: string | null;
                            agent_slug: string;
                            /** @description ENV, CREDENTIAL, CONFIG (and ALLOW) lines; a pod or loop naming the preset gets them under its own */
                            agentfile_layer: string | null;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            created_at: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            updated_at: string;
                        };
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    updatePreset: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                /** @description a preset of the organization (lower-case letters, digits, . _ -; up to 63) */
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    description?: string | null;
                    /** @description a built-in agent or a custom agent of the organization */
                    agent_slug?: string;
                    /** @description agentfile lines a team shares: ENV, CREDENTIAL, CONFIG (and ALLOW); PROMPT, MODE, REPO and BRANCH are 400 (they belong to each pod or loop) */
                    agentfile_layer?: string | null;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        preset: {
                            name: string;
                            description: string | null;
                            agent_slug: string;
                            /** @description ENV, CREDENTIAL, CONFIG (and ALLOW) lines; a pod or loop naming the preset gets them under its own */
                            agentfile_layer: string | null;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            created_at: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            updated_at: string;
                        };
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    deletePreset: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                /** @description a preset of the organization (lower-case letters, digits, . _ -; up to 63) */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message: string;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    registerRunner: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    token: string;
                    name: string;
                    labels: string[];
                    max_pods: number;
                    version: string;
                    os: string;
                    arch: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        runner_id: number;
                        org: string;
                        credential: string;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listTickets: {
        parameters: {
            query?: {
                repository_id?: number;
                status?: "backlog" | "todo" | "in_progress" | "in_review" | "done";
                type?: "feature" | "bug" | "task" | "chore" | "improvement";
                assignee_id?: number;
                /** @description comma-separated, at most 20 labels of at most 50 characters (trimmed); tickets must have all of them */
                labels?: string;
                /** @description default 20, values above 100 are clamped */
                limit?: number;
                offset?: number;
            };
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        tickets: components["schemas"]["TicketListItem"][];
                        total: number;
                        limit: number;
                        offset: number;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    createTicket: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 h (per API key): the same key with the same body replays the first response; with another body it is 409 IDEMPOTENCY_MISMATCH, and while the first is in flight 409 IDEMPOTENCY_IN_PROGRESS. */
                "idempotency-key"?: string;
            };
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @enum {unknown} */
                    type: "feature" | "bug" | "task" | "chore" | "improvement";
                    title: string;
                    description?: string;
                    /** @enum {unknown} */
                    priority?: "low" | "medium" | "high" | "urgent";
                    /** @enum {unknown} */
                    status?: "backlog" | "todo" | "in_progress" | "in_review" | "done";
                    assignee_id?: number;
                    repository_id?: number;
                    labels?: string[];
                    parent_slug?: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    "idempotent-replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        ticket: components["schemas"]["Ticket"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    getTicketBoard: {
        parameters: {
            query?: {
                repository_id?: number;
                /** @description default 100, values above 500 are clamped */
                limit_per_column?: number;
            };
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        board: {
                            columns: {
                                /** @enum {unknown} */
                                status: "backlog" | "todo" | "in_progress" | "in_review" | "done";
                                total: number;
                                tickets: components["schemas"]["BoardTicket"][];
                            }[];
                        };
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    getTicket: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        ticket: {
                            id: number;
                            slug: string;
                            /** @enum {unknown} */
                            type: "feature" | "bug" | "task" | "chore" | "improvement";
                            title: string;
                            /** @enum {unknown} */
                            status: "backlog" | "todo" | "in_progress" | "in_review" | "done";
                            /** @enum {unknown} */
                            priority: "low" | "medium" | "high" | "urgent";
                            assignee_id: number | null;
                            repository_id: number | null;
                            labels: string[];
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            created_at: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            updated_at: string;
                            description: string | null;
                            parent_slug: string | null;
                            created_by: {
                                /**
                                 * @description user: a person (through a key of theirs); api_key: a key of no one; pod: a pod (its token); loop: a loop (its schedule); admin: the admin token; system: the server itself
                                 * @enum {unknown}
                                 */
                                type: "user" | "api_key" | "pod" | "loop" | "admin" | "system";
                                /** @description the user's or key's id, the pod's key, the loop's slug; null for admin and system */
                                id: number | string | null;
                                /** @description the name at the time of the change */
                                name: string;
                            } | null;
                            updated_by: {
                                /**
                                 * @description user: a person (through a key of theirs); api_key: a key of no one; pod: a pod (its token); loop: a loop (its schedule); admin: the admin token; system: the server itself
                                 * @enum {unknown}
                                 */
                                type: "user" | "api_key" | "pod" | "loop" | "admin" | "system";
                                /** @description the user's or key's id, the pod's key, the loop's slug; null for admin and system */
                                id: number | string | null;
                                /** @description the name at the time of the change */
                                name: string;
                            } | null;
                            /** @description the ticket's pods, newest first (at most 20) */
                            pods: {
                                key: string;
                                status: string;
                                agent_slug: string;
                                /**
                                 * Format: date-time
                                 * @description ISO 8601 UTC with milliseconds
                                 */
                                created_at: string;
                                delivery: components["schemas"]["Delivery"] | null;
                            }[];
                            /** @description merge requests its pods opened, as their deliveries recorded them */
                            merge_requests: {
                                id: number;
                                url: string;
                                /** @enum {unknown} */
                                state: "opened" | "merged" | "closed";
                                branch: string;
                            }[];
                        };
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    updateTicket: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @enum {unknown} */
                    type?: "feature" | "bug" | "task" | "chore" | "improvement";
                    title?: string;
                    description?: string | null;
                    /** @enum {unknown} */
                    priority?: "low" | "medium" | "high" | "urgent";
                    /** @enum {unknown} */
                    status?: "backlog" | "todo" | "in_progress" | "in_review" | "done";
                    assignee_id?: number | null;
                    labels?: string[];
                    parent_slug?: string | null;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        ticket: components["schemas"]["Ticket"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    deleteTicket: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message: string;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    setTicketStatus: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @enum {unknown} */
                    status: "backlog" | "todo" | "in_progress" | "in_review" | "done";
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message: string;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listChannels: {
        parameters: {
            query?: {
                repository_id?: number;
                /** @description matched ignoring case */
                ticket_slug?: string;
                include_archived?: "true" | "false" | "1" | "0";
                /** @description default 100, values above 100 are clamped */
                limit?: number;
                offset?: number;
            };
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        channels: components["schemas"]["ChannelListItem"][];
                        /** @description channels matching the filters, across all pages */
                        total: number;
                        /** @description the page size used */
                        limit: number;
                        offset: number;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    createChannel: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 h (per API key): the same key with the same body replays the first response; with another body it is 409 IDEMPOTENCY_MISMATCH, and while the first is in flight 409 IDEMPOTENCY_IN_PROGRESS. */
                "idempotency-key"?: string;
            };
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Stored NFKC-normalized and trimmed, and unique per organization in that form ignoring case (`ſecret`, `ｓecret` and `Secret ` are `secret`); control, format and other invisible characters (Unicode Cc, Cf, Zl, Zp, default-ignorable) are refused, and the normalized name must still be 2 to 100 characters */
                    name: string;
                    description?: string;
                    repository_id?: number;
                    ticket_slug?: string;
                    /** @description Initial document or context for the channel (at most as long as a 1 MiB body can hold, whatever its characters) */
                    document?: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    "idempotent-replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        channel: components["schemas"]["Channel"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    getChannel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        channel: components["schemas"]["Channel"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    updateChannel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Stored NFKC-normalized and trimmed, and unique per organization in that form ignoring case (`ſecret`, `ｓecret` and `Secret ` are `secret`); control, format and other invisible characters (Unicode Cc, Cf, Zl, Zp, default-ignorable) are refused, and the normalized name must still be 2 to 100 characters */
                    name?: string;
                    description?: string | null;
                    /** @description Initial document or context for the channel (at most as long as a 1 MiB body can hold, whatever its characters) */
                    document?: string | null;
                    /** @description true archives the channel, false unarchives it */
                    archived?: boolean;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        channel: components["schemas"]["Channel"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listChannelMessages: {
        parameters: {
            query?: {
                /** @description default 50, values above 100 are clamped */
                limit?: number;
                /** @description only messages older than this message id */
                before?: number;
                /** @description only messages newer than this message id; the page then holds the oldest of those (to poll and page forward) */
                after?: number;
            };
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        messages: components["schemas"]["ChannelMessage"][];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    postChannelMessage: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 h (per API key): the same key with the same body replays the first response; with another body it is 409 IDEMPOTENCY_MISMATCH, and while the first is in flight 409 IDEMPOTENCY_IN_PROGRESS. */
                "idempotency-key"?: string;
            };
            path: {
                /** @description the organization's slug */
                org: string;
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    content: string;
                    pod_key?: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    "idempotent-replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message: components["schemas"]["ChannelMessage"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listRepositories: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        repositories: components["schemas"]["Repository"][];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    getRepository: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        repository: components["schemas"]["Repository"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listRepositoryBranches: {
        parameters: {
            query?: {
                /** @description a Git provider access token of the caller; never stored or logged */
                access_token?: string;
            };
            header?: {
                /** @description alternative to the access_token parameter; wins if both are sent */
                "x-git-access-token"?: string;
            };
            path: {
                /** @description the organization's slug */
                org: string;
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        branches: string[];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
            502: components["responses"]["Error502"];
        };
    };
    listMergeRequests: {
        parameters: {
            query?: {
                /** @description source branch */
                branch?: string;
                state?: "opened" | "merged" | "closed" | "all";
            };
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        merge_requests: components["schemas"]["MergeRequest"][];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
            502: components["responses"]["Error502"];
        };
    };
    listPods: {
        parameters: {
            query?: {
                status?: "queued" | "initializing" | "running" | "completed" | "failed" | "terminated" | "orphaned";
                /** @description only that ticket's pods */
                ticket_slug?: string;
                repository_id?: number;
                agent_slug?: string;
                runner_id?: number;
                /** @description only pods created after this time */
                created_after?: string;
                /** @description default 20, values above 100 are clamped */
                limit?: number;
                offset?: number;
            };
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        pods: components["schemas"]["PodListItem"][];
                        total: number;
                        limit: number;
                        offset: number;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    createPod: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 h (per API key): the same key with the same body replays the first response; with another body it is 409 IDEMPOTENCY_MISMATCH, and while the first is in flight 409 IDEMPOTENCY_IN_PROGRESS. */
                "idempotency-key"?: string;
            };
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description a built-in agent or a custom agent of the organization (400 otherwise); or give preset */
                    agent_slug?: string;
                    /** @description a preset of the organization (lower-case letters, digits, . _ -; up to 63) */
                    preset?: string;
                    /** @description only runners carrying all of these labels run it; none carrying them with the agent: 503 */
                    runner_labels?: string[];
                    /** @description PROMPT, MODE, CONFIG, REPO, BRANCH, CREDENTIAL, ENV and ALLOW directives, one a line; a bad line is 400 naming it */
                    agentfile_layer?: string;
                    runner_id?: number;
                    /** @description a ticket of the organization (400 otherwise) */
                    ticket_slug?: string;
                    alias?: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    "idempotent-replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        pod: {
                            pod_key: string;
                            /** @enum {unknown} */
                            status: "queued" | "initializing" | "running" | "completed" | "failed" | "terminated" | "orphaned";
                            agent_slug: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            created_at: string;
                        };
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    getPod: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                key: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        pod: components["schemas"]["Pod"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    getPodOutput: {
        parameters: {
            query?: {
                tail_bytes?: number;
            };
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                key: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        output: string;
                        truncated: boolean;
                        total_bytes: number;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    getPodTranscript: {
        parameters: {
            query?: {
                /** @description only the entries whose seq is greater (pass the last `last_seq`) */
                after?: number;
                /** @description only the entries whose seq is smaller (pass the seq of the first entry you have, to read what came before it) */
                before?: number;
                newest?: "true" | "false" | "1" | "0";
                /** @description default 1000, values above 5000 are clamped */
                limit?: number;
                /** @description read the output as this format instead of the pod's agent's (e.g. a `shell` pod whose script runs `claude -p --output-format stream-json`) */
                format?: "claude-code" | "codex" | "gemini-cli" | "opencode" | "plain";
            };
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                key: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        entries: {
                            /** @description increasing and stable, not consecutive: the byte offset in the output of the line the entry comes from, plus its place in that line */
                            seq: number;
                            /** @enum {unknown} */
                            kind: "text" | "tool_call" | "tool_result" | "error" | "status";
                            /** @description the message; a tool call's one-line title (`$ <command>` for shell tools); a result's output */
                            text: string;
                            tool: {
                                /** @description the tool's name as the agent calls it */
                                name: string;
                                /** @description the arguments as the agent gave them (calls); null on results */
                                input: unknown;
                                /** @description what the tool returned (results); null on calls */
                                output: string | null;
                                /** @description the tool failed (as the agent reports it; a shell command that exited non-zero where its exit code is known) */
                                is_error: boolean;
                                /** @description on a result: the seq of its call; null on calls and when the call is no longer in the kept output */
                                call_seq: number | null;
                                /** @description shell tools: the command line (on the call and on its result) */
                                command: string | null;
                                /** @description file tools (calls only): what the call changes, enough to show it as a diff */
                                edits: {
                                    path: string;
                                    /**
                                     * @description `add` (a new file), `write` (the whole file written), `update` (`old_text` replaced by `new_text`), `delete`
                                     * @enum {unknown}
                                     */
                                    change: "add" | "write" | "update" | "delete";
                                    /** @description the text replaced (`update`); null where the output does not carry it */
                                    old_text: string | null;
                                    /** @description the new text (`add`, `write`, `update`); null where the output does not carry it (Codex) */
                                    new_text: string | null;
                                }[] | null;
                            } | null;
                        }[];
                        /**
                         * @description the format the output was read as
                         * @enum {unknown}
                         */
                        format: "claude-code" | "codex" | "gemini-cli" | "opencode" | "plain";
                        /** @description the seq of the last entry returned (the `after` given when none is); pass it as `after` to get what follows */
                        last_seq: number | null;
                        /** @description more entries are there already (the page reached `limit`) */
                        has_more: boolean;
                        /** @description matching entries before the page (0 unless `newest` was asked) */
                        earlier: number;
                        /** @description the page size used */
                        limit: number;
                        /** @description the pod has ended: the transcript will not grow */
                        complete: boolean;
                        /** @description the kept output (the last 1 MiB) does not reach back to the start: earlier entries are gone */
                        truncated: boolean;
                        /** @description bytes of output the pod has written */
                        total_bytes: number;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    getPodPatch: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                key: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "text/x-patch": string;
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    terminatePod: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                key: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message: string;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listRunners: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        runners: components["schemas"]["Runner"][];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listAvailableRunners: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        runners: components["schemas"]["Runner"][];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    getRunner: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        runner: components["schemas"]["Runner"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listRunnerPods: {
        parameters: {
            query?: {
                status?: "queued" | "initializing" | "running" | "completed" | "failed" | "terminated" | "orphaned";
                /** @description default 50, values above 100 are clamped */
                limit?: number;
                offset?: number;
            };
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        pods: components["schemas"]["RunnerPodItem"][];
                        total: number;
                        limit: number;
                        offset: number;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    getUsage: {
        parameters: {
            query?: {
                /** @description an ISO date, UTC (2026-11-27); `to` includes its day */
                from?: string;
                /** @description an ISO date, UTC (2026-11-27); `to` includes its day */
                to?: string;
                /** @description default `day` (UTC) */
                group_by?: "day" | "agent" | "loop" | "ticket" | "repository" | "user";
            };
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {unknown} */
                        group_by: "day" | "agent" | "loop" | "ticket" | "repository" | "user";
                        from: string;
                        to: string;
                        groups: {
                            /** @description the day (YYYY-MM-DD), agent slug, loop slug, ticket slug or repository name; null: pods without one */
                            key: string | null;
                            /** @description input neither read from nor written to a prompt cache */
                            input_tokens: number | null;
                            output_tokens: number | null;
                            cache_read_tokens: number | null;
                            cache_write_tokens: number | null;
                            cost_usd: number | null;
                            /** @description pods created in the range that fall in the group */
                            pods: number;
                        }[];
                        total: {
                            /** @description input neither read from nor written to a prompt cache */
                            input_tokens: number | null;
                            output_tokens: number | null;
                            cache_read_tokens: number | null;
                            cache_write_tokens: number | null;
                            cost_usd: number | null;
                            /** @description pods created in the range that fall in the group */
                            pods: number;
                        };
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listLoops: {
        parameters: {
            query?: {
                /** @description no default (all loops); values above 100 are clamped */
                limit?: number;
                /** @description default 0 */
                offset?: number;
            };
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        loops: components["schemas"]["Loop"][];
                        total: number;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    createLoop: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 h (per API key): the same key with the same body replays the first response; with another body it is 409 IDEMPOTENCY_MISMATCH, and while the first is in flight 409 IDEMPOTENCY_IN_PROGRESS. */
                "idempotency-key"?: string;
            };
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        /** @description Give agent_slug (a built-in agent) or custom_agent_slug (a custom agent of the organization), not both; with neither, the server's default agent. An unknown slug is 400. */
        requestBody: {
            content: {
                "application/json": {
                    name: string;
                    slug?: string;
                    /** @description The prompt, with {{name}} placeholders (spaces inside the braces allowed) filled from prompt_variables and trigger variables */
                    prompt_template: string;
                    description?: string;
                    agent_slug?: string;
                    custom_agent_slug?: string;
                    /** @description values by placeholder name; values that are not strings are rendered as JSON. Objects and arrays may nest at most 32 levels (400 beyond). */
                    prompt_variables?: {
                        [key: string]: components["schemas"]["JsonValue"];
                    };
                    repository_id?: number;
                    runner_id?: number;
                    /** @description A git branch name, checked like an agentfile BRANCH (no whitespace, none of ~ ^ : ? * [ \, no .., not starting with -): 400 otherwise */
                    branch_name?: string;
                    /** @enum {unknown} */
                    execution_mode?: "direct" | "autopilot";
                    /** @description Five fields: minute hour day-of-month month day-of-week (lists, ranges, steps, names; L, W, # and ? as croner reads them). Six- and seven-field forms and nicknames such as @hourly are refused; so is an expression that matches no date (400 with the reason). */
                    cron_expression?: string;
                    /** @description An IANA time zone name (e.g. UTC, Europe/Berlin), matched ignoring case; it must exist in the server's time zone data (400 otherwise). Offsets such as +01:00 are refused. */
                    cron_timezone?: string;
                    /** @enum {unknown} */
                    sandbox_strategy?: "persistent" | "fresh";
                    session_persistence?: boolean;
                    /** @enum {unknown} */
                    concurrency_policy?: "skip" | "queue" | "replace";
                    max_concurrent_runs?: number;
                    timeout_minutes?: number;
                    /** @description http(s) URL with a host, as a URL parser reads it (`http://[`, `http://%zz` or `http://a:b:c` are 400). Addresses that resolve to loopback, private, link-local or metadata ranges are refused (400) unless the server allows them. */
                    callback_url?: string;
                    autopilot_config?: {
                        max_iterations?: number;
                        iteration_timeout_sec?: number;
                    };
                    /** @description The agentfile every run's pod gets (CREDENTIAL, ENV, CONFIG; same grammar as a pod's). PROMPT, MODE, REPO, BRANCH and CONFIG max_iterations / iteration_timeout_sec are 400: the loop's own fields give them. */
                    agentfile_layer?: string;
                    /** @description only runners carrying all of these labels run it; none carrying them with the agent: 503 */
                    runner_labels?: string[];
                    /** @description a preset of the organization (lower-case letters, digits, . _ -; up to 63) */
                    preset?: string;
                    /** @description US dollars a day (UTC) its runs may spend on model calls: a run that would start over it is skipped; each run's pod is held to what is left */
                    budget_usd_per_day?: number | null;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    "idempotent-replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        loop: components["schemas"]["Loop"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    getLoop: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        loop: components["schemas"]["Loop"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    updateLoop: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
            };
            cookie?: never;
        };
        /** @description Give agent_slug (a built-in agent) or custom_agent_slug (a custom agent of the organization), not both; with neither, the server's default agent. An unknown slug is 400. Setting one clears the other. */
        requestBody: {
            content: {
                "application/json": {
                    name?: string;
                    /** @description The prompt, with {{name}} placeholders (spaces inside the braces allowed) filled from prompt_variables and trigger variables */
                    prompt_template?: string;
                    description?: string | null;
                    agent_slug?: string | null;
                    custom_agent_slug?: string | null;
                    /** @description values by placeholder name; values that are not strings are rendered as JSON. Objects and arrays may nest at most 32 levels (400 beyond). */
                    prompt_variables?: {
                        [key: string]: components["schemas"]["JsonValue"];
                    };
                    repository_id?: number | null;
                    runner_id?: number | null;
                    /** @description A git branch name, checked like an agentfile BRANCH (no whitespace, none of ~ ^ : ? * [ \, no .., not starting with -): 400 otherwise */
                    branch_name?: string | null;
                    /** @enum {unknown} */
                    execution_mode?: "direct" | "autopilot";
                    /** @description Five fields: minute hour day-of-month month day-of-week (lists, ranges, steps, names; L, W, # and ? as croner reads them). Six- and seven-field forms and nicknames such as @hourly are refused; so is an expression that matches no date (400 with the reason). */
                    cron_expression?: string | null;
                    /** @description An IANA time zone name (e.g. UTC, Europe/Berlin), matched ignoring case; it must exist in the server's time zone data (400 otherwise). Offsets such as +01:00 are refused. */
                    cron_timezone?: string;
                    /** @enum {unknown} */
                    sandbox_strategy?: "persistent" | "fresh";
                    session_persistence?: boolean;
                    /** @enum {unknown} */
                    concurrency_policy?: "skip" | "queue" | "replace";
                    max_concurrent_runs?: number;
                    timeout_minutes?: number;
                    /** @description http(s) URL with a host, as a URL parser reads it (`http://[`, `http://%zz` or `http://a:b:c` are 400). Addresses that resolve to loopback, private, link-local or metadata ranges are refused (400) unless the server allows them. */
                    callback_url?: string | null;
                    autopilot_config?: {
                        max_iterations?: number;
                        iteration_timeout_sec?: number;
                    };
                    /** @description The agentfile every run's pod gets (CREDENTIAL, ENV, CONFIG; same grammar as a pod's). PROMPT, MODE, REPO, BRANCH and CONFIG max_iterations / iteration_timeout_sec are 400: the loop's own fields give them. */
                    agentfile_layer?: string | null;
                    /** @description only runners carrying all of these labels run it; none carrying them with the agent: 503 */
                    runner_labels?: string[];
                    /** @description a preset of the organization (lower-case letters, digits, . _ -; up to 63) */
                    preset?: string | null;
                    /** @description US dollars a day (UTC) its runs may spend on model calls: a run that would start over it is skipped; each run's pod is held to what is left */
                    budget_usd_per_day?: number | null;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        loop: components["schemas"]["Loop"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    deleteLoop: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
            };
            cookie?: never;
        };
        /** @description no body, or {} */
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message: string;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    enableLoop: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
            };
            cookie?: never;
        };
        /** @description no body, or {} */
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        loop: components["schemas"]["Loop"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    disableLoop: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
            };
            cookie?: never;
        };
        /** @description no body, or {} */
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        loop: components["schemas"]["Loop"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    triggerLoop: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 h (per API key): the same key with the same body replays the first response; with another body it is 409 IDEMPOTENCY_MISMATCH, and while the first is in flight 409 IDEMPOTENCY_IN_PROGRESS. */
                "idempotency-key"?: string;
            };
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": {
                    /** @description values by placeholder name; values that are not strings are rendered as JSON. Objects and arrays may nest at most 32 levels (400 beyond). */
                    variables?: {
                        [key: string]: components["schemas"]["JsonValue"];
                    };
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    "idempotent-replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        run: components["schemas"]["Run"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listLoopRuns: {
        parameters: {
            query?: {
                status?: "queued" | "pending" | "running" | "completed" | "failed" | "cancelled" | "timeout" | "skipped";
                /** @description default 20, values above 100 are clamped */
                limit?: number;
                offset?: number;
            };
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        runs: components["schemas"]["Run"][];
                        total: number;
                        limit: number;
                        offset: number;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    getLoopRun: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
                run_id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        run: components["schemas"]["Run"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    cancelLoopRun: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
                run_id: number;
            };
            cookie?: never;
        };
        /** @description no body, or {} */
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message: string;
                        run: components["schemas"]["Run"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listLoopRunDeliveries: {
        parameters: {
            query?: {
                /** @description default 20, values above 100 are clamped */
                limit?: number;
                offset?: number;
            };
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
                run_id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        deliveries: components["schemas"]["WebhookDelivery"][];
                        total: number;
                        limit: number;
                        offset: number;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    redeliverLoopRun: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 h (per API key): the same key with the same body replays the first response; with another body it is 409 IDEMPOTENCY_MISMATCH, and while the first is in flight 409 IDEMPOTENCY_IN_PROGRESS. */
                "idempotency-key"?: string;
            };
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
                run_id: number;
            };
            cookie?: never;
        };
        /** @description no body, or {} */
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    "idempotent-replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        delivery: components["schemas"]["WebhookDelivery"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    whoami: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        principal: {
                            /**
                             * @description api_key: an API key; pod: the token of a running pod (DROVER_POD_TOKEN)
                             * @enum {unknown}
                             */
                            type: "api_key" | "pod";
                            /** @description The scopes the credential holds. A pod token's pods:write covers only spawning and terminating the pod's own children. */
                            scopes: string[];
                            /** @description the API key, null for a pod token */
                            api_key_id: number | null;
                            /** @description the pod whose token this is, null for an API key */
                            pod_key: string | null;
                            /** @description the person the API key belongs to; null for a key of no one and for a pod token */
                            user: {
                                id: number;
                                name: string;
                            } | null;
                        };
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listActivity: {
        parameters: {
            query?: {
                /** @description events at or after this time */
                from?: string;
                /** @description events before this time */
                to?: string;
                /** @description comma-separated event types or families (`pod.*`); default: every type the key may read */
                types?: string;
                /** @description only changes made by this kind of actor */
                actor_type?: "user" | "api_key" | "pod" | "loop" | "admin" | "system";
                /** @description default 50 */
                limit?: number;
                /** @description next_cursor of the previous page */
                cursor?: string;
            };
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        events: {
                            id: number;
                            type: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            created_at: string;
                            actor: {
                                /**
                                 * @description user: a person (through a key of theirs); api_key: a key of no one; pod: a pod (its token); loop: a loop (its schedule); admin: the admin token; system: the server itself
                                 * @enum {unknown}
                                 */
                                type: "user" | "api_key" | "pod" | "loop" | "admin" | "system";
                                /** @description the user's or key's id, the pod's key, the loop's slug; null for admin and system */
                                id: number | string | null;
                                /** @description the name at the time of the change */
                                name: string;
                            } | null;
                            /** @description the resource as the event stream carries it (`{"ticket": {…}}`, …) */
                            data: unknown;
                        }[];
                        /** @description pass as cursor for the next (older) page; null on the last page */
                        next_cursor: string | null;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listOrgUsers: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        users: {
                            id: number;
                            name: string;
                        }[];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listPresets: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        presets: {
                            name: string;
                            description: string | null;
                            agent_slug: string;
                            /** @description ENV, CREDENTIAL, CONFIG (and ALLOW) lines; a pod or loop naming the preset gets them under its own */
                            agentfile_layer: string | null;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            created_at: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            updated_at: string;
                        }[];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    streamEvents: {
        parameters: {
            query?: {
                /** @description Comma-separated event types; `family.*` selects a family (ticket.*, channel.*, message.*, pod.*, loop.*, run.*, runner.*). Default: every type the key's scopes allow. Types: ticket.created (tickets:read), ticket.updated (tickets:read), ticket.deleted (tickets:read), channel.created (channels:read), channel.updated (channels:read), message.created (channels:read), pod.created (pods:read), pod.updated (pods:read), loop.created (loops:read), loop.updated (loops:read), loop.deleted (loops:read), run.created (loops:read), run.updated (loops:read), runner.updated (runners:read). A type the key may not receive is 403, an unknown one 400. */
                types?: string;
                /** @description Only events about this channel (its channel, messages and pods) */
                channel_id?: number;
                /** @description Only events about this pod (the pod, its messages, its run) */
                pod_key?: string;
                /** @description Only events about this loop (the loop and its runs) */
                loop_slug?: string;
                /** @description Only events about this ticket (the ticket, its channels, messages and pods) */
                ticket_slug?: string;
                /** @description Resume after this event id (as the Last-Event-ID header; the header wins) */
                last_event_id?: number;
            };
            header?: {
                /** @description Resume after this event id: the events after it are replayed, then the stream goes live */
                "last-event-id"?: string;
            };
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    streamPodOutput: {
        parameters: {
            query?: {
                /** @description Byte offset to start from (default 0; clamped to what is kept) */
                offset?: number;
            };
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                key: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listLoopsAtOrgsPrefix: {
        parameters: {
            query?: {
                /** @description no default (all loops); values above 100 are clamped */
                limit?: number;
                /** @description default 0 */
                offset?: number;
            };
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        loops: components["schemas"]["Loop"][];
                        total: number;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    createLoopAtOrgsPrefix: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 h (per API key): the same key with the same body replays the first response; with another body it is 409 IDEMPOTENCY_MISMATCH, and while the first is in flight 409 IDEMPOTENCY_IN_PROGRESS. */
                "idempotency-key"?: string;
            };
            path: {
                /** @description the organization's slug */
                org: string;
            };
            cookie?: never;
        };
        /** @description Give agent_slug (a built-in agent) or custom_agent_slug (a custom agent of the organization), not both; with neither, the server's default agent. An unknown slug is 400. */
        requestBody: {
            content: {
                "application/json": {
                    name: string;
                    slug?: string;
                    /** @description The prompt, with {{name}} placeholders (spaces inside the braces allowed) filled from prompt_variables and trigger variables */
                    prompt_template: string;
                    description?: string;
                    agent_slug?: string;
                    custom_agent_slug?: string;
                    /** @description values by placeholder name; values that are not strings are rendered as JSON. Objects and arrays may nest at most 32 levels (400 beyond). */
                    prompt_variables?: {
                        [key: string]: components["schemas"]["JsonValue"];
                    };
                    repository_id?: number;
                    runner_id?: number;
                    /** @description A git branch name, checked like an agentfile BRANCH (no whitespace, none of ~ ^ : ? * [ \, no .., not starting with -): 400 otherwise */
                    branch_name?: string;
                    /** @enum {unknown} */
                    execution_mode?: "direct" | "autopilot";
                    /** @description Five fields: minute hour day-of-month month day-of-week (lists, ranges, steps, names; L, W, # and ? as croner reads them). Six- and seven-field forms and nicknames such as @hourly are refused; so is an expression that matches no date (400 with the reason). */
                    cron_expression?: string;
                    /** @description An IANA time zone name (e.g. UTC, Europe/Berlin), matched ignoring case; it must exist in the server's time zone data (400 otherwise). Offsets such as +01:00 are refused. */
                    cron_timezone?: string;
                    /** @enum {unknown} */
                    sandbox_strategy?: "persistent" | "fresh";
                    session_persistence?: boolean;
                    /** @enum {unknown} */
                    concurrency_policy?: "skip" | "queue" | "replace";
                    max_concurrent_runs?: number;
                    timeout_minutes?: number;
                    /** @description http(s) URL with a host, as a URL parser reads it (`http://[`, `http://%zz` or `http://a:b:c` are 400). Addresses that resolve to loopback, private, link-local or metadata ranges are refused (400) unless the server allows them. */
                    callback_url?: string;
                    autopilot_config?: {
                        max_iterations?: number;
                        iteration_timeout_sec?: number;
                    };
                    /** @description The agentfile every run's pod gets (CREDENTIAL, ENV, CONFIG; same grammar as a pod's). PROMPT, MODE, REPO, BRANCH and CONFIG max_iterations / iteration_timeout_sec are 400: the loop's own fields give them. */
                    agentfile_layer?: string;
                    /** @description only runners carrying all of these labels run it; none carrying them with the agent: 503 */
                    runner_labels?: string[];
                    /** @description a preset of the organization (lower-case letters, digits, . _ -; up to 63) */
                    preset?: string;
                    /** @description US dollars a day (UTC) its runs may spend on model calls: a run that would start over it is skipped; each run's pod is held to what is left */
                    budget_usd_per_day?: number | null;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    "idempotent-replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        loop: components["schemas"]["Loop"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    getLoopAtOrgsPrefix: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        loop: components["schemas"]["Loop"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    updateLoopAtOrgsPrefix: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
            };
            cookie?: never;
        };
        /** @description Give agent_slug (a built-in agent) or custom_agent_slug (a custom agent of the organization), not both; with neither, the server's default agent. An unknown slug is 400. Setting one clears the other. */
        requestBody: {
            content: {
                "application/json": {
                    name?: string;
                    /** @description The prompt, with {{name}} placeholders (spaces inside the braces allowed) filled from prompt_variables and trigger variables */
                    prompt_template?: string;
                    description?: string | null;
                    agent_slug?: string | null;
                    custom_agent_slug?: string | null;
                    /** @description values by placeholder name; values that are not strings are rendered as JSON. Objects and arrays may nest at most 32 levels (400 beyond). */
                    prompt_variables?: {
                        [key: string]: components["schemas"]["JsonValue"];
                    };
                    repository_id?: number | null;
                    runner_id?: number | null;
                    /** @description A git branch name, checked like an agentfile BRANCH (no whitespace, none of ~ ^ : ? * [ \, no .., not starting with -): 400 otherwise */
                    branch_name?: string | null;
                    /** @enum {unknown} */
                    execution_mode?: "direct" | "autopilot";
                    /** @description Five fields: minute hour day-of-month month day-of-week (lists, ranges, steps, names; L, W, # and ? as croner reads them). Six- and seven-field forms and nicknames such as @hourly are refused; so is an expression that matches no date (400 with the reason). */
                    cron_expression?: string | null;
                    /** @description An IANA time zone name (e.g. UTC, Europe/Berlin), matched ignoring case; it must exist in the server's time zone data (400 otherwise). Offsets such as +01:00 are refused. */
                    cron_timezone?: string;
                    /** @enum {unknown} */
                    sandbox_strategy?: "persistent" | "fresh";
                    session_persistence?: boolean;
                    /** @enum {unknown} */
                    concurrency_policy?: "skip" | "queue" | "replace";
                    max_concurrent_runs?: number;
                    timeout_minutes?: number;
                    /** @description http(s) URL with a host, as a URL parser reads it (`http://[`, `http://%zz` or `http://a:b:c` are 400). Addresses that resolve to loopback, private, link-local or metadata ranges are refused (400) unless the server allows them. */
                    callback_url?: string | null;
                    autopilot_config?: {
                        max_iterations?: number;
                        iteration_timeout_sec?: number;
                    };
                    /** @description The agentfile every run's pod gets (CREDENTIAL, ENV, CONFIG; same grammar as a pod's). PROMPT, MODE, REPO, BRANCH and CONFIG max_iterations / iteration_timeout_sec are 400: the loop's own fields give them. */
                    agentfile_layer?: string | null;
                    /** @description only runners carrying all of these labels run it; none carrying them with the agent: 503 */
                    runner_labels?: string[];
                    /** @description a preset of the organization (lower-case letters, digits, . _ -; up to 63) */
                    preset?: string | null;
                    /** @description US dollars a day (UTC) its runs may spend on model calls: a run that would start over it is skipped; each run's pod is held to what is left */
                    budget_usd_per_day?: number | null;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        loop: components["schemas"]["Loop"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    deleteLoopAtOrgsPrefix: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
            };
            cookie?: never;
        };
        /** @description no body, or {} */
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message: string;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    enableLoopAtOrgsPrefix: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
            };
            cookie?: never;
        };
        /** @description no body, or {} */
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        loop: components["schemas"]["Loop"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    disableLoopAtOrgsPrefix: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
            };
            cookie?: never;
        };
        /** @description no body, or {} */
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        loop: components["schemas"]["Loop"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    triggerLoopAtOrgsPrefix: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 h (per API key): the same key with the same body replays the first response; with another body it is 409 IDEMPOTENCY_MISMATCH, and while the first is in flight 409 IDEMPOTENCY_IN_PROGRESS. */
                "idempotency-key"?: string;
            };
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": {
                    /** @description values by placeholder name; values that are not strings are rendered as JSON. Objects and arrays may nest at most 32 levels (400 beyond). */
                    variables?: {
                        [key: string]: components["schemas"]["JsonValue"];
                    };
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    "idempotent-replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        run: components["schemas"]["Run"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listLoopRunsAtOrgsPrefix: {
        parameters: {
            query?: {
                status?: "queued" | "pending" | "running" | "completed" | "failed" | "cancelled" | "timeout" | "skipped";
                /** @description default 20, values above 100 are clamped */
                limit?: number;
                offset?: number;
            };
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        runs: components["schemas"]["Run"][];
                        total: number;
                        limit: number;
                        offset: number;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    getLoopRunAtOrgsPrefix: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
                run_id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        run: components["schemas"]["Run"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    cancelLoopRunAtOrgsPrefix: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
                run_id: number;
            };
            cookie?: never;
        };
        /** @description no body, or {} */
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message: string;
                        run: components["schemas"]["Run"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listLoopRunDeliveriesAtOrgsPrefix: {
        parameters: {
            query?: {
                /** @description default 20, values above 100 are clamped */
                limit?: number;
                offset?: number;
            };
            header?: never;
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
                run_id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        deliveries: components["schemas"]["WebhookDelivery"][];
                        total: number;
                        limit: number;
                        offset: number;
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    redeliverLoopRunAtOrgsPrefix: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 h (per API key): the same key with the same body replays the first response; with another body it is 409 IDEMPOTENCY_MISMATCH, and while the first is in flight 409 IDEMPOTENCY_IN_PROGRESS. */
                "idempotency-key"?: string;
            };
            path: {
                /** @description the organization's slug */
                org: string;
                slug: string;
                run_id: number;
            };
            cookie?: never;
        };
        /** @description no body, or {} */
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "x-request-id": components["headers"]["X-Request-Id"];
                    "idempotent-replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        delivery: components["schemas"]["WebhookDelivery"];
                    };
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    loopRunFinished: {
        parameters: {
            query?: never;
            header: {
                /** @description The same on every attempt of one event (msg_…) */
                "webhook-id": string;
                /** @description Seconds since the epoch, of this attempt */
                "webhook-timestamp": string;
                /** @description v1,<base64 signature> */
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["LoopRunFinishedEvent"];
            };
        };
        responses: {
            /** @description Gone: no retry */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Delivered: no retry */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Retried on the schedule above */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
}

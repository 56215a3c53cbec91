// Generated from the OpenAPI document by `npm run client`: do not edit.
// The values each operation's query parameters and request body fields take, by operationId.
// A test fails when the document changes and this file is not regenerated.
export const INPUT_ENUMS = {
  "adminCreateRepository": {
    "provider": [
      "github",
      "gitlab",
      "gitea",
      "git"
    ]
  },
  "createCustomAgent": {
    "prompt_position": [
      "last",
      "first",
      "stdin",
      "env"
    ]
  },
  "createLoop": {
    "execution_mode": [
      "direct",
      "autopilot"
    ],
    "sandbox_strategy": [
      "persistent",
      "fresh"
    ],
    "concurrency_policy": [
      "skip",
      "queue",
      "replace"
    ]
  },
  "createLoopAtOrgsPrefix": {
    "execution_mode": [
      "direct",
      "autopilot"
    ],
    "sandbox_strategy": [
      "persistent",
      "fresh"
    ],
    "concurrency_policy": [
      "skip",
      "queue",
      "replace"
    ]
  },
  "createTicket": {
    "type": [
      "feature",
      "bug",
      "task",
      "chore",
      "improvement"
    ],
    "priority": [
      "low",
      "medium",
      "high",
      "urgent"
    ],
    "status": [
      "backlog",
      "todo",
      "in_progress",
      "in_review",
      "done"
    ]
  },
  "getPodTranscript": {
    "format": [
      "claude-code",
      "codex",
      "gemini-cli",
      "opencode",
      "plain"
    ]
  },
  "listChannels": {
    "include_archived": [
      "true",
      "false",
      "1",
      "0"
    ]
  },
  "listLoopRuns": {
    "status": [
      "queued",
      "pending",
      "running",
      "completed",
      "failed",
      "cancelled",
      "timeout",
      "skipped"
    ]
  },
  "listLoopRunsAtOrgsPrefix": {
    "status": [
      "queued",
      "pending",
      "running",
      "completed",
      "failed",
      "cancelled",
      "timeout",
      "skipped"
    ]
  },
  "listMergeRequests": {
    "state": [
      "opened",
      "merged",
      "closed",
      "all"
    ]
  },
  "listPods": {
    "status": [
      "queued",
      "initializing",
      "running",
      "completed",
      "failed",
      "terminated",
      "orphaned"
    ]
  },
  "listRunnerPods": {
    "status": [
      "queued",
      "initializing",
      "running",
      "completed",
      "failed",
      "terminated",
      "orphaned"
    ]
  },
  "listTickets": {
    "status": [
      "backlog",
      "todo",
      "in_progress",
      "in_review",
      "done"
    ],
    "type": [
      "feature",
      "bug",
      "task",
      "chore",
      "improvement"
    ]
  },
  "setTicketStatus": {
    "status": [
      "backlog",
      "todo",
      "in_progress",
      "in_review",
      "done"
    ]
  },
  "updateCustomAgent": {
    "prompt_position": [
      "last",
      "first",
      "stdin",
      "env"
    ]
  },
  "updateLoop": {
    "execution_mode": [
      "direct",
      "autopilot"
    ],
    "sandbox_strategy": [
      "persistent",
      "fresh"
    ],
    "concurrency_policy": [
      "skip",
      "queue",
      "replace"
    ]
  },
  "updateLoopAtOrgsPrefix": {
    "execution_mode": [
      "direct",
      "autopilot"
    ],
    "sandbox_strategy": [
      "persistent",
      "fresh"
    ],
    "concurrency_policy": [
      "skip",
      "queue",
      "replace"
    ]
  },
  "updateTicket": {
    "type": [
      "feature",
      "bug",
      "task",
      "chore",
      "improvement"
    ],
    "priority": [
      "low",
      "medium",
      "high",
      "urgent"
    ],
    "status": [
      "backlog",
      "todo",
      "in_progress",
      "in_review",
      "done"
    ]
  }
} as const;

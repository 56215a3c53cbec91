import { Type, type Static } from 'typebox';
import { FILE_CHANGES, TRANSCRIPT_FORMATS, TRANSCRIPT_KINDS, type TranscriptEntry as ParsedEntry } from '../../agents/transcript/index.ts';
import { Limit, Nullable, QueryBoolean } from './common.ts';

const FileEdit = Type.Object(
  {
    path: Type.String(),
    change: Type.Enum([...FILE_CHANGES], { description: '`add` (a new file), `write` (the whole file written), `update` (`old_text` replaced by `new_text`), `delete`' }),
    old_text: Nullable(Type.String({ description: 'the text replaced (`update`); null where the output does not carry it' })),
    new_text: Nullable(Type.String({ description: 'the new text (`add`, `write`, `update`); null where the output does not carry it (Codex)' })),
  },
  { additionalProperties: false },
);

const Tool = Type.Object(
  {
    name: Type.String({ description: "the tool's name as the agent calls it" }),
    input: Type.Unknown({ description: 'the arguments as the agent gave them (calls); null on results' }),
    output: Nullable(Type.String({ description: 'what the tool returned (results); null on calls' })),
    is_error: Type.Boolean({ description: 'the tool failed (as the agent reports it; a shell command that exited non-zero where its exit code is known)' }),
    call_seq: Nullable(Type.Integer({ description: 'on a result: the seq of its call; null on calls and when the call is no longer in the kept output' })),
    command: Nullable(Type.String({ description: 'shell tools: the command line (on the call and on its result)' })),
    edits: Nullable(Type.Array(FileEdit, { description: 'file tools (calls only): what the call changes, enough to show it as a diff' })),
  },
  { additionalProperties: false },
);

export const TranscriptEntry = Type.Object(
  {
    seq: Type.Integer({ minimum: 0, description: 'increasing and stable, not consecutive: the byte offset in the output of the line the entry comes from, plus its place in that line' }),
    kind: Type.Enum([...TRANSCRIPT_KINDS]),
    text: Type.String({ description: "the message; a tool call's one-line title (`$ <command>` for shell tools); a result's output" }),
    tool: Nullable(Tool),
  },
  { additionalProperties: false },
);

// The parser's type (src/agents/transcript/types.ts) and this schema describe one shape.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameShape: Same<Static<typeof TranscriptEntry>, ParsedEntry> = true;
void sameShape;

export const TranscriptQuery = Type.Object(
  {
    after: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'only the entries whose seq is greater (pass the last `last_seq`)' })),
    before: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'only the entries whose seq is smaller (pass the seq of the first entry you have, to read what came before it)' })),
    // the page is the newest `limit` matching entries instead of the oldest; `earlier` counts those before it
    newest: Type.Optional(QueryBoolean),
    limit: Type.Optional(Limit(1000, 5000)),
    format: Type.Optional(
      Type.Enum([...TRANSCRIPT_FORMATS], { description: "read the output as this format instead of the pod's agent's (e.g. a `shell` pod whose script runs `claude -p --output-format stream-json`)" }),
    ),
  },
  { additionalProperties: false },
);

export const Transcript = Type.Object({
  entries: Type.Array(TranscriptEntry),
  format: Type.Enum([...TRANSCRIPT_FORMATS], { description: 'the format the output was read as' }),
  last_seq: Nullable(Type.Integer({ description: 'the seq of the last entry returned (the `after` given when none is); pass it as `after` to get what follows' })),
  has_more: Type.Boolean({ description: 'more entries are there already (the page reached `limit`)' }),
  earlier: Type.Integer({ minimum: 0, description: 'matching entries before the page (0 unless `newest` was asked)' }),
  limit: Type.Integer({ description: 'the page size used' }),
  complete: Type.Boolean({ description: 'the pod has ended: the transcript will not grow' }),
  truncated: Type.Boolean({ description: 'the kept output (the last 1 MiB) does not reach back to the start: earlier entries are gone' }),
  total_bytes: Type.Integer({ description: 'bytes of output the pod has written' }),
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AGENTFILE_MAX_BYTES,
  AGENTFILE_MAX_LINES,
  MAX_ENV_VALUE_BYTES,
  MAX_ENV_VARIABLES,
  SANDBOX_TYPES,
  parseAgentfileLayer,
  parseAgentfileLayerWithLines,
  type AgentfileConfig,
  type AgentfileLayer,
} from '../../src/domain/pods/agentfile.ts';
import { agentfileError } from '../../src/domain/pods/agentfile-syntax.ts';
import { AppError } from '../../src/errors.ts';
import { forbiddenEnvName } from '../../src/agents/environment.ts';

const EMPTY: AgentfileLayer = { prompt: null, mode: 'direct', config: {}, repo: null, branch: null, credentials: [], env: {}, allow: [] };
const layer = (partial: Partial<AgentfileLayer>): AgentfileLayer => ({ ...EMPTY, ...partial });

function parseError(text: string): AppError {
  try {
    parseAgentfileLayer(text);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
}

/** Asserts the error names exactly `line` and mentions `reason`. */
function expectLineError(text: string, line: number | null, reason: string | RegExp): void {
  const error = parseError(text);
  expect(error.code).toBe('VALIDATION_FAILED');
  expect(error.status).toBe(400);
  const details = error.extra.details ?? [];
  expect(details).toHaveLength(1);
  expect(details[0].field).toBe('/agentfile_layer');
  const prefix = line === null ? '' : `line ${line}: `;
  expect(details[0].message.startsWith(prefix)).toBe(true);
  if (line === null) expect(details[0].message).not.toMatch(/^line \d+/);
  expect(error.message).toBe(`agentfile_layer ${details[0].message}`);
  if (typeof reason === 'string') expect(details[0].message).toContain(reason);
  else expect(details[0].message).toMatch(reason);
}

describe('parseAgentfileLayer: valid input', () => {
  const cases: [string, string, AgentfileLayer][] = [
    ['empty text', '', EMPTY],
    ['only comments and blank lines', '# hello\n\n   # indented comment\n\t\n', EMPTY],
    ['quoted prompt', 'PROMPT "Fix the bug"', layer({ prompt: 'Fix the bug' })],
    ['empty quoted prompt', 'PROMPT ""', layer({ prompt: '' })],
    [
      'quoted prompt escapes',
      String.raw`PROMPT "say \"hi\"\\ \n\t\/ \u00e9 \b\f\r"`,
      layer({ prompt: 'say "hi"\\ \n\t/ é \b\f\r' }),
    ],
    ['quoted prompt with # inside', 'PROMPT "use # and <<END"', layer({ prompt: 'use # and <<END' })],
    ['quoted prompt, trailing whitespace after quote', 'PROMPT "x"   \t', layer({ prompt: 'x' })],
    ['quoted prompt, raw tab', 'PROMPT "a\tb"', layer({ prompt: 'a\tb' })],
    ['heredoc prompt', 'PROMPT <<END\nline one\n  line two\nEND', layer({ prompt: 'line one\n  line two' })],
    ['heredoc, other delimiter word', 'PROMPT <<_Eof9\nx\n_Eof9\n', layer({ prompt: 'x' })],
    ['heredoc, space after <<', 'PROMPT << EOF\nx\nEOF', layer({ prompt: 'x' })],
    ['heredoc, empty body', 'PROMPT <<END\nEND\nMODE autopilot', layer({ prompt: '', mode: 'autopilot' })],
    ['heredoc, one blank line', 'PROMPT <<END\n\nEND', layer({ prompt: '' })],
    ['heredoc, two blank lines', 'PROMPT <<END\n\n\nEND', layer({ prompt: '\n' })],
    [
      'heredoc, # lines, quotes and directives are body text',
      'PROMPT <<END\n# not a comment\n"quoted" \\n\nMODE autopilot\n\nEND',
      layer({ prompt: '# not a comment\n"quoted" \\n\nMODE autopilot\n' }),
    ],
    [
      'heredoc, delimiter inside a longer line does not close it',
      'PROMPT <<END\nEND of story\nthe END\nENDING\nEND',
      layer({ prompt: 'END of story\nthe END\nENDING' }),
    ],
    ['heredoc, closing delimiter with whitespace around', 'PROMPT <<END\nbody\n   END \t\nBRANCH x', layer({ prompt: 'body', branch: 'x' })],
    ['heredoc, indented body kept verbatim', 'PROMPT <<END\n\t  x  \nEND', layer({ prompt: '\t  x  ' })],
    ['heredoc, CRLF', 'PROMPT <<END\r\nline one\r\nline two\r\nEND\r\nMODE autopilot\r\n', layer({ prompt: 'line one\nline two', mode: 'autopilot' })],
    ['heredoc, body may contain NUL-free unicode', 'PROMPT <<END\nçà ✓ 🎉\nEND', layer({ prompt: 'çà ✓ 🎉' })],
    ['MODE direct', 'MODE direct', EMPTY],
    ['MODE autopilot', 'MODE autopilot', layer({ mode: 'autopilot' })],
    ['MODE quoted', 'MODE "autopilot"', layer({ mode: 'autopilot' })],
    ['CONFIG model', 'CONFIG model = claude-sonnet-4-5', layer({ config: { model: 'claude-sonnet-4-5' } })],
    ['CONFIG model with provider path', 'CONFIG model = us.anthropic.claude:0/x@y', layer({ config: { model: 'us.anthropic.claude:0/x@y' } })],
    ['CONFIG model, 200 chars', `CONFIG model = ${'m'.repeat(200)}`, layer({ config: { model: 'm'.repeat(200) } })],
    ['CONFIG without spaces around =', 'CONFIG max_turns=5', layer({ config: { max_turns: 5 } })],
    ['CONFIG quoted value', 'CONFIG max_turns = "7"', layer({ config: { max_turns: 7 } })],
    ['CONFIG max_turns bounds', 'CONFIG max_turns = 1\n', layer({ config: { max_turns: 1 } })],
    ['CONFIG max_turns upper bound', 'CONFIG max_turns = 10000', layer({ config: { max_turns: 10000 } })],
    ['CONFIG pod_timeout_minutes', 'CONFIG pod_timeout_minutes = 10080', layer({ config: { pod_timeout_minutes: 10080 } })],
    ['CONFIG auto_close true', 'CONFIG auto_close = true', layer({ config: { auto_close: true } })],
    ['CONFIG auto_close false', 'CONFIG auto_close = false', layer({ config: { auto_close: false } })],
    ['CONFIG sandbox_type', 'CONFIG sandbox_type = worktree', layer({ config: { sandbox_type: 'worktree' } })],
    ['CONFIG sandbox_type none', 'CONFIG sandbox_type = "none"', layer({ config: { sandbox_type: 'none' } })],
    ['CONFIG channel_id', 'CONFIG channel_id = 42', layer({ config: { channel_id: 42 } })],
    ['CONFIG channel_id max', `CONFIG channel_id = ${Number.MAX_SAFE_INTEGER}`, layer({ config: { channel_id: Number.MAX_SAFE_INTEGER } })],
    ['CONFIG max_iterations', 'CONFIG max_iterations = 1000', layer({ config: { max_iterations: 1000 } })],
    ['CONFIG iteration_timeout_sec', 'CONFIG iteration_timeout_sec = 86400', layer({ config: { iteration_timeout_sec: 86400 } })],
    ['CONFIG permission_mode', 'CONFIG permission_mode = acceptEdits', layer({ config: { permission_mode: 'acceptEdits' } })],
    ['REPO by id', 'REPO 12', layer({ repo: { id: 12 } })],
    ['REPO by name', 'REPO backend', layer({ repo: { name: 'backend' } })],
    ['REPO by name with slash and spaces', 'REPO  acme/My Repo  ', layer({ repo: { name: 'acme/My Repo' } })],
    ['REPO quoted digits is a name', 'REPO "123"', layer({ repo: { name: '123' } })],
    ['REPO quoted name keeps spaces', 'REPO " x "', layer({ repo: { name: ' x ' } })],
    ['BRANCH', 'BRANCH feature/login-fix_2', layer({ branch: 'feature/login-fix_2' })],
    ['BRANCH with dots', 'BRANCH release/v1.2.3', layer({ branch: 'release/v1.2.3' })],
    ['BRANCH quoted', 'BRANCH "main"', layer({ branch: 'main' })],
    ['CREDENTIAL', 'CREDENTIAL GITHUB_TOKEN', layer({ credentials: ['GITHUB_TOKEN'] })],
    [
      'CREDENTIAL repeated, duplicates dropped, order kept',
      'CREDENTIAL B\nCREDENTIAL A\nCREDENTIAL B\nCREDENTIAL _X1',
      layer({ credentials: ['B', 'A', '_X1'] }),
    ],
    ['CREDENTIAL that merely contains DROVER', 'CREDENTIAL MY_DROVER_KEY', layer({ credentials: ['MY_DROVER_KEY'] })],
    ['leading whitespace before directives', '  MODE autopilot\n\tBRANCH b', layer({ mode: 'autopilot', branch: 'b' })],
    ['tab between directive and argument', 'MODE\tautopilot', layer({ mode: 'autopilot' })],
    ['CRLF everywhere', 'MODE autopilot\r\nREPO 3\r\n# c\r\n\r\nBRANCH dev\r\n', layer({ mode: 'autopilot', repo: { id: 3 }, branch: 'dev' })],
    ['a leading BOM is ignored', '\ufeffMODE autopilot', layer({ mode: 'autopilot' })],
    [
      'everything together',
      [
        '# pod for the login bug',
        'PROMPT <<END',
        'Fix the login bug.',
        'END',
        'MODE autopilot',
        'CONFIG model = opus',
        'CONFIG max_turns = 50',
        'CONFIG pod_timeout_minutes = 90',
        'CONFIG auto_close = false',
        'CONFIG sandbox_type = worktree',
        'CONFIG channel_id = 7',
        'CONFIG max_iterations = 5',
        'CONFIG iteration_timeout_sec = 1200',
        'CONFIG permission_mode = bypassPermissions',
        'REPO acme/web',
        'BRANCH fix/login',
        'CREDENTIAL ANTHROPIC_API_KEY',
        'CREDENTIAL GH_TOKEN',
        'ENV ANTHROPIC_BASE_URL "http://10.0.0.5:8080"',
        'ENV LOG_LEVEL debug',
      ].join('\n'),
      {
        prompt: 'Fix the login bug.',
        mode: 'autopilot',
        config: {
          model: 'opus',
          max_turns: 50,
          pod_timeout_minutes: 90,
          auto_close: false,
          sandbox_type: 'worktree',
          channel_id: 7,
          max_iterations: 5,
          iteration_timeout_sec: 1200,
          permission_mode: 'bypassPermissions',
        },
        repo: { name: 'acme/web' },
        branch: 'fix/login',
        credentials: ['ANTHROPIC_API_KEY', 'GH_TOKEN'],
        env: { ANTHROPIC_BASE_URL: 'http://10.0.0.5:8080', LOG_LEVEL: 'debug' },
        allow: [],
      },
    ],
  ];

  it.each(cases)('%s', (_name, text, expected) => {
    expect(parseAgentfileLayer(text)).toEqual(expected);
  });

  it('returns a fresh object each time (no shared defaults)', () => {
    const a = parseAgentfileLayer('');
    a.credentials.push('X');
    a.config.model = 'y';
    expect(parseAgentfileLayer('')).toEqual(EMPTY);
  });
});

describe('parseAgentfileLayer: errors name the line', () => {
  const cases: [string, string, number, string | RegExp][] = [
    // directives
    ['unknown directive', 'MODE direct\nFOO bar', 2, 'unknown directive "FOO" (expected PROMPT, MODE, CONFIG, REPO, BRANCH, CREDENTIAL, ENV or ALLOW)'],
    ['lower-case directive hints at the upper-case form', '\n\nprompt "x"', 3, 'unknown directive "prompt" (directives are upper-case: PROMPT)'],
    ['mixed-case directive', 'Mode autopilot', 1, 'directives are upper-case: MODE'],
    ['directive glued to its quote', 'PROMPT"x"', 1, 'unknown directive "PROMPT\\"x\\""'],
    ['trailing comment is not a comment', 'MODE direct # note', 1, 'MODE must be direct or autopilot'],
    // missing arguments
    ['PROMPT without argument', 'PROMPT', 1, 'PROMPT needs an argument'],
    ['MODE without argument', '# c\nMODE   ', 2, 'MODE needs an argument'],
    ['CONFIG without argument', 'CONFIG', 1, 'CONFIG needs an argument'],
    ['REPO without argument', 'REPO\t', 1, 'REPO needs an argument'],
    ['BRANCH without argument', 'BRANCH', 1, 'BRANCH needs an argument'],
    ['CREDENTIAL without argument', 'CREDENTIAL', 1, 'CREDENTIAL needs an argument'],
    // repeated single-valued directives
    ['PROMPT twice', 'PROMPT "a"\nPROMPT "b"', 2, 'PROMPT given twice (first on line 1)'],
    ['PROMPT twice, heredoc first', 'PROMPT <<END\na\nb\nEND\nPROMPT "c"', 5, 'PROMPT given twice (first on line 1)'],
    ['MODE twice', 'MODE direct\n\nMODE direct', 3, 'MODE given twice (first on line 1)'],
    ['REPO twice', 'REPO 1\nREPO 2', 2, 'REPO given twice (first on line 1)'],
    ['BRANCH twice', 'BRANCH a\nBRANCH a', 2, 'BRANCH given twice (first on line 1)'],
    ['same CONFIG key twice', 'CONFIG max_turns = 1\nCONFIG model = x\nCONFIG max_turns = 1', 3, 'CONFIG max_turns given twice (first on line 1)'],
    // PROMPT
    ['bare prompt', 'PROMPT fix it', 1, 'PROMPT takes a double-quoted string'],
    ['unterminated string', 'PROMPT "abc', 1, 'unterminated string in PROMPT'],
    ['string ending in a backslash', 'PROMPT "abc\\', 1, 'unterminated string in PROMPT'],
    ['text after the closing quote', 'PROMPT "a" b', 1, 'unexpected text after the closing quote of PROMPT'],
    ['second string after the first', 'PROMPT "a""b"', 1, 'unexpected text after the closing quote'],
    ['unknown escape', 'PROMPT "a\\qb"', 1, 'unknown escape "\\\\q" in PROMPT'],
    ['short \\u escape', 'PROMPT "\\u12"', 1, 'bad \\u escape in PROMPT'],
    ['non-hex \\u escape', 'PROMPT "\\u12g4"', 1, 'bad \\u escape'],
    ['raw control character in a string', 'PROMPT "a\u0001b"', 1, 'raw control character in PROMPT'],
    ['raw CR inside a string', 'PROMPT "a\rb"', 1, 'raw control character'],
    ['NUL via escape', 'PROMPT "a\\u0000"', 1, 'PROMPT must not contain NUL characters'],
    ['NUL in a heredoc', 'PROMPT <<END\na\u0000\nEND', 1, 'PROMPT must not contain NUL characters'],
    ['unterminated heredoc', 'MODE direct\nPROMPT <<END\nbody\nEN D\n', 2, 'heredoc PROMPT <<END started here is never closed'],
    ['unterminated heredoc, delimiter only inside longer lines', 'PROMPT <<EOF\nEOF.\n# EOF', 1, 'never closed'],
    ['heredoc delimiter is case-sensitive', 'PROMPT <<END\nend', 1, 'never closed'],
    ['heredoc without delimiter', 'PROMPT <<', 1, 'heredoc delimiter must be a word'],
    ['heredoc delimiter starting with a digit', 'PROMPT <<1END\n1END', 1, 'heredoc delimiter must be a word'],
    ['heredoc delimiter with text after it', 'PROMPT <<END now\nEND', 1, 'heredoc delimiter must be a word'],
    ['heredoc delimiter quoted', "PROMPT <<'END'\nEND", 1, 'heredoc delimiter must be a word'],
    ['error after a heredoc counts body lines', 'PROMPT <<END\n1\n2\n3\nEND\nMODE x', 6, 'MODE must be direct or autopilot, got "x"'],
    // MODE
    ['MODE bad value', 'MODE auto', 1, 'MODE must be direct or autopilot, got "auto"'],
    ['MODE upper-case value', 'MODE DIRECT', 1, 'MODE must be direct or autopilot'],
    ['MODE bad quoted string', 'MODE "direct', 1, 'unterminated string in MODE'],
    // CONFIG syntax
    ['CONFIG without =', 'CONFIG model opus', 1, 'CONFIG expects <key> = <value>'],
    ['CONFIG without key', 'CONFIG = 5', 1, 'CONFIG expects <key> = <value>'],
    ['CONFIG unknown key', 'CONFIG temperature = 1', 1, 'unknown CONFIG key "temperature" (known: model, max_turns,'],
    ['CONFIG key is case-sensitive', 'CONFIG Model = x', 1, 'unknown CONFIG key "Model"'],
    ['CONFIG without value', 'CONFIG model =', 1, 'CONFIG model needs a value'],
    ['CONFIG text after quoted value', 'CONFIG model = "a" b', 1, 'unexpected text after the closing quote of CONFIG model'],
    // CONFIG values
    ['model empty quoted', 'CONFIG model = ""', 1, 'CONFIG model must not be empty'],
    ['model too long', `CONFIG model = ${'m'.repeat(201)}`, 1, 'CONFIG model must be at most 200 characters'],
    ['model with whitespace', 'CONFIG model = claude opus', 1, 'CONFIG model must not contain whitespace'],
    ['model with control character', 'CONFIG model = "a\\u0007"', 1, 'CONFIG model must not contain whitespace or control characters'],
    ['model looking like an option', 'CONFIG model = --dangerous', 1, 'CONFIG model must not start with -'],
    ['max_turns zero', 'CONFIG max_turns = 0', 1, 'CONFIG max_turns must be between 1 and 10000, got "0"'],
    ['max_turns too large', 'CONFIG max_turns = 10001', 1, 'CONFIG max_turns must be between 1 and 10000'],
    ['max_turns negative', 'CONFIG max_turns = -3', 1, 'must be between 1 and 10000'],
    ['max_turns decimal', 'CONFIG max_turns = 1.5', 1, 'CONFIG max_turns must be an integer, got "1.5"'],
    ['max_turns exponent', 'CONFIG max_turns = 1e3', 1, 'CONFIG max_turns must be an integer'],
    ['max_turns plus sign', 'CONFIG max_turns = +3', 1, 'CONFIG max_turns must be an integer'],
    ['max_turns word', 'CONFIG max_turns = many', 1, 'CONFIG max_turns must be an integer'],
    ['pod_timeout_minutes too large', 'CONFIG pod_timeout_minutes = 10081', 1, 'CONFIG pod_timeout_minutes must be between 1 and 10080'],
    ['pod_timeout_minutes zero', 'CONFIG pod_timeout_minutes = 0', 1, 'between 1 and 10080'],
    ['auto_close yes', 'CONFIG auto_close = yes', 1, 'CONFIG auto_close must be true or false, got "yes"'],
    ['auto_close TRUE', 'CONFIG auto_close = TRUE', 1, 'CONFIG auto_close must be true or false'],
    ['auto_close 1', 'CONFIG auto_close = 1', 1, 'CONFIG auto_close must be true or false'],
    ['sandbox_type unknown', 'CONFIG sandbox_type = docker', 1, 'CONFIG sandbox_type must be one of worktree, none, got "docker"'],
    ['channel_id zero', 'CONFIG channel_id = 0', 1, 'CONFIG channel_id must be between 1 and'],
    ['channel_id beyond safe integers', 'CONFIG channel_id = 9007199254740992', 1, 'CONFIG channel_id must be between 1 and 9007199254740991'],
    ['channel_id huge', `CONFIG channel_id = ${'9'.repeat(400)}`, 1, 'CONFIG channel_id must be between'],
    ['max_iterations too large', 'CONFIG max_iterations = 1001', 1, 'CONFIG max_iterations must be between 1 and 1000'],
    ['iteration_timeout_sec too large', 'CONFIG iteration_timeout_sec = 86401', 1, 'CONFIG iteration_timeout_sec must be between 1 and 86400'],
    // Which modes an agent takes is checked where the agent is known (launch); here only the shape.
    ['permission_mode like an option', 'CONFIG permission_mode = --yolo', 1, 'CONFIG permission_mode must be a mode name'],
    ['permission_mode with a space', 'CONFIG permission_mode = "auto edit"', 1, 'CONFIG permission_mode must be a mode name'],
    // ENV
    ['ENV without a value', 'ENV FOO', 1, 'ENV expects NAME "value"'],
    ['ENV lower-case name', 'ENV foo "x"', 1, 'ENV must be an environment variable name matching [A-Z_][A-Z0-9_]*, got "foo"'],
    ['ENV name starting with a digit', 'ENV 1FOO "x"', 1, 'ENV must be an environment variable name'],
    ['ENV DROVER_ name', 'ENV DROVER_API_URL "http://x"', 1, "ENV DROVER_API_URL is reserved: Drover sets it in the agent's environment itself"],
    ['ENV PATH', 'ENV PATH "/tmp/evil"', 1, 'ENV PATH is reserved'],
    ['ENV HOME', 'ENV HOME "/"', 1, 'ENV HOME is reserved'],
    ['ENV name too long', `ENV ${'A'.repeat(129)} "x"`, 1, 'ENV must be at most 128 characters'],
    ['ENV bare value with spaces', 'ENV FOO a b', 1, 'ENV FOO: quote a value that contains whitespace'],
    ['ENV unterminated value', 'ENV FOO "abc', 1, 'unterminated string in ENV FOO'],
    ['ENV text after the value', 'ENV FOO "a" b', 1, 'unexpected text after the closing quote of ENV FOO'],
    ['ENV NUL in the value', 'ENV FOO "a\\u0000b"', 1, 'ENV FOO must not contain NUL characters'],
    ['ENV value too long', `ENV FOO "${'v'.repeat(MAX_ENV_VALUE_BYTES + 1)}"`, 1, `ENV FOO must be at most ${MAX_ENV_VALUE_BYTES} bytes`],
    ['ENV value too long in UTF-8', `ENV FOO "${'é'.repeat(MAX_ENV_VALUE_BYTES / 2 + 1)}"`, 1, 'ENV FOO must be at most 4096 bytes'],
    ['ENV name twice', 'ENV FOO a\nENV FOO b', 2, 'ENV FOO given twice (first on line 1)'],
    ['ENV then CREDENTIAL of one name', 'ENV API_KEY "x"\nCREDENTIAL API_KEY', 2, 'API_KEY is given both as ENV (line 1) and as CREDENTIAL'],
    ['CREDENTIAL then ENV of one name', 'CREDENTIAL API_KEY\n\nENV API_KEY "x"', 3, 'API_KEY is given both as CREDENTIAL (line 1) and as ENV'],
    [
      'ENV past the limit',
      Array.from({ length: MAX_ENV_VARIABLES + 1 }, (_, i) => `ENV V_${i} "${i}"`).join('\n'),
      MAX_ENV_VARIABLES + 1,
      `at most ${MAX_ENV_VARIABLES} ENV variables`,
    ],
    // REPO
    ['REPO id zero', 'REPO 0', 1, 'REPO id must be between 1 and'],
    ['REPO id beyond safe integers', 'REPO 99999999999999999999', 1, 'REPO id must be between 1 and'],
    ['REPO quoted empty', 'REPO ""', 1, 'REPO name must not be empty'],
    ['REPO quoted blank', 'REPO "   "', 1, 'REPO name must not be empty'],
    ['REPO name too long', `REPO ${'r'.repeat(256)}`, 1, 'REPO name must be at most 255 characters'],
    ['REPO name with control character', 'REPO "a\\tb"', 1, 'REPO name must not contain control characters'],
    ['REPO text after quoted name', 'REPO "a" b', 1, 'unexpected text after the closing quote of REPO'],
    // BRANCH
    ['BRANCH with space', 'BRANCH my branch', 1, 'BRANCH must not contain whitespace'],
    ['BRANCH with ..', 'BRANCH a..b', 1, 'BRANCH must not contain ..'],
    ['BRANCH leading -', 'BRANCH -f', 1, 'BRANCH must not start with -'],
    ['BRANCH with ~', 'BRANCH a~1', 1, 'BRANCH must not contain any of ~ ^ : ? * [ \\'],
    ['BRANCH with ^', 'BRANCH a^', 1, 'must not contain any of'],
    ['BRANCH with :', 'BRANCH a:b', 1, 'must not contain any of'],
    ['BRANCH with ?', 'BRANCH a?', 1, 'must not contain any of'],
    ['BRANCH with *', 'BRANCH a*', 1, 'must not contain any of'],
    ['BRANCH with [', 'BRANCH a[b', 1, 'must not contain any of'],
    ['BRANCH with backslash', 'BRANCH a\\b', 1, 'must not contain any of'],
    ['BRANCH too long', `BRANCH ${'b'.repeat(201)}`, 1, 'BRANCH must be at most 200 characters'],
    ['BRANCH empty quoted', 'BRANCH ""', 1, 'BRANCH must not be empty'],
    ['BRANCH with @{', 'BRANCH a@{1}', 1, 'BRANCH must not be @ or contain @{'],
    ['BRANCH @', 'BRANCH @', 1, 'BRANCH must not be @'],
    ['BRANCH trailing /', 'BRANCH a/', 1, 'BRANCH must not start or end with /'],
    ['BRANCH double /', 'BRANCH a//b', 1, 'contain //'],
    ['BRANCH .lock', 'BRANCH a.lock', 1, 'BRANCH must not end with . or .lock'],
    ['BRANCH trailing .', 'BRANCH a.', 1, 'must not end with .'],
    ['BRANCH hidden component', 'BRANCH a/.b', 1, 'BRANCH must not have a path component starting with .'],
    ['BRANCH quoted with whitespace', 'BRANCH "a b"', 1, 'BRANCH must not contain whitespace'],
    // CREDENTIAL
    ['CREDENTIAL lower-case', 'CREDENTIAL github_token', 1, 'CREDENTIAL must be an environment variable name matching [A-Z_][A-Z0-9_]*, got "github_token"'],
    ['CREDENTIAL leading digit', 'CREDENTIAL 1TOKEN', 1, 'CREDENTIAL must be an environment variable name'],
    ['CREDENTIAL with dash', 'CREDENTIAL GH-TOKEN', 1, 'CREDENTIAL must be an environment variable name'],
    ['CREDENTIAL with two names', 'CREDENTIAL A B', 1, 'CREDENTIAL must be an environment variable name'],
    ['CREDENTIAL too long', `CREDENTIAL ${'A'.repeat(129)}`, 1, 'CREDENTIAL must be at most 128 characters'],
    ['CREDENTIAL DROVER_ prefix', 'CREDENTIAL A\nCREDENTIAL DROVER_POD_TOKEN', 2, 'CREDENTIAL DROVER_POD_TOKEN is reserved'],
    ['CREDENTIAL DROVER_ alone', 'CREDENTIAL DROVER_', 1, 'is reserved'],
    ['CREDENTIAL PATH', 'CREDENTIAL PATH', 1, 'CREDENTIAL PATH is reserved'],
    ['CREDENTIAL HOME', 'CREDENTIAL HOME', 1, 'CREDENTIAL HOME is reserved'],
    ['CREDENTIAL LANG', 'CREDENTIAL LANG', 1, 'CREDENTIAL LANG is reserved'],
    ['CREDENTIAL TERM', 'CREDENTIAL TERM', 1, 'CREDENTIAL TERM is reserved'],
    // line numbering
    ['CRLF line numbers', 'MODE direct\r\n\r\n# x\r\nNOPE\r\n', 4, 'unknown directive "NOPE"'],
    ['the first error wins', 'FOO\nBAR', 1, 'unknown directive "FOO"'],
    ['long values are cut short in messages', `MODE ${'x'.repeat(500)}`, 1, /got "x{40}…"$/],
  ];

  it.each(cases)('%s', (_name, text, line, reason) => {
    expectLineError(text, line, reason);
  });

  it('never echoes more than a short excerpt of a bad value', () => {
    const error = parseError(`CONFIG model = ${'x'.repeat(5000)}`);
    expect(error.message.length).toBeLessThan(200);
  });
});

describe('parseAgentfileLayerWithLines', () => {
  it('reports the line of each single-valued directive and CONFIG key, for errors found later', () => {
    const text = '# c\nPROMPT <<END\na\nEND\nREPO web\nCONFIG channel_id = 9\nCREDENTIAL A\nBRANCH b\nMODE autopilot';
    const { layer: parsed, lines } = parseAgentfileLayerWithLines(text);
    expect(parsed).toEqual(parseAgentfileLayer(text));
    expect(lines).toEqual({ PROMPT: 2, REPO: 5, 'CONFIG channel_id': 6, BRANCH: 8, MODE: 9 });
    expect(parseAgentfileLayerWithLines('').lines).toEqual({});
  });

  it('agentfileError builds the same error shape as the parser', () => {
    const error = agentfileError(5, 'REPO names no repository of this organization ("web")');
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.message).toBe('agentfile_layer line 5: REPO names no repository of this organization ("web")');
    expect(error.extra.details).toEqual([{ field: '/agentfile_layer', message: 'line 5: REPO names no repository of this organization ("web")' }]);
  });
});

describe('parseAgentfileLayer: size limits', () => {
  it(`accepts exactly ${AGENTFILE_MAX_BYTES} bytes and refuses one more`, () => {
    expect(parseAgentfileLayer('#'.repeat(AGENTFILE_MAX_BYTES))).toEqual(EMPTY);
    expectLineError('#'.repeat(AGENTFILE_MAX_BYTES + 1), null, 'must be at most 65536 bytes');
  });

  it('counts bytes in UTF-8, not characters', () => {
    const text = '#' + 'é'.repeat(AGENTFILE_MAX_BYTES / 2); // 1 + 2 × 32768 bytes
    expect(text.length).toBeLessThan(AGENTFILE_MAX_BYTES);
    expectLineError(text, null, 'must be at most 65536 bytes');
  });

  it(`accepts ${AGENTFILE_MAX_LINES} lines (with or without a final newline) and refuses more`, () => {
    const lines = Array.from({ length: AGENTFILE_MAX_LINES }, () => '#');
    expect(parseAgentfileLayer(lines.join('\n'))).toEqual(EMPTY);
    expect(parseAgentfileLayer(lines.join('\n') + '\n')).toEqual(EMPTY);
    expect(parseAgentfileLayer(lines.join('\r\n') + '\r\n')).toEqual(EMPTY);
    expectLineError([...lines, '#'].join('\n'), null, 'must be at most 2000 lines');
    expectLineError(lines.join('\n') + '\n\n', null, 'must be at most 2000 lines');
  });

  it('refuses a value that is not a string', () => {
    expectLineError(42 as unknown as string, null, 'must be a string');
  });
});

// ---------------------------------------------------------------------------------------------
// Property tests, with a test-only serialiser.

interface Style {
  /** Quote every optional-quote value (MODE, CONFIG values, names) instead of writing it bare. */
  quote: boolean;
  /** Prompts as heredocs (when the prompt allows it) or as quoted strings. */
  heredoc: boolean;
  explicitMode: boolean;
  indent: string;
  eol: '\n' | '\r\n';
  /** Where each non-CREDENTIAL directive goes among the CREDENTIAL lines (whose order matters). */
  positions: number[];
}

const RESERVED = new Set(['PATH', 'HOME', 'LANG', 'TERM']);

/** A value that may be bare: not starting with a quote, and unchanged by the line trim. */
const bareOk = (value: string): boolean => !value.startsWith('"') && value.trim() === value && value !== '';

function heredoc(prompt: string): string[] {
  const body = prompt === '' ? [] : prompt.split('\n');
  let delimiter = 'END';
  for (let n = 1; body.some((l) => l.trim() === delimiter); n++) delimiter = `END_${n}`;
  return [`PROMPT <<${delimiter}`, ...body, delimiter];
}

/** Directive blocks (a heredoc is one block of several lines); comments may go between blocks. */
function serialise(value: AgentfileLayer, style: Style): string[][] {
  const q = (v: string, mustQuote = false) => (style.quote || mustQuote || !bareOk(v) ? JSON.stringify(v) : v);
  const others: string[][] = [];
  if (value.prompt !== null) {
    // A `\r` at the end of a heredoc line would be read as part of a CRLF ending.
    others.push(style.heredoc && !value.prompt.includes('\r') ? heredoc(value.prompt) : [`PROMPT ${JSON.stringify(value.prompt)}`]);
  }
  if (value.mode !== 'direct' || style.explicitMode) others.push([`MODE ${q(value.mode)}`]);
  for (const [key, v] of Object.entries(value.config)) others.push([`CONFIG ${key} = ${q(String(v))}`]);
  if (value.repo !== null) {
    others.push(['id' in value.repo ? `REPO ${value.repo.id}` : `REPO ${q(value.repo.name, /^[0-9]+$/.test(value.repo.name))}`]);
  }
  if (value.branch !== null) others.push([`BRANCH ${q(value.branch)}`]);

  const blocks = [
    ...value.credentials.map((name) => [`CREDENTIAL ${q(name)}`]),
    ...Object.entries(value.env).map(([name, v]) => [`ENV ${name} ${/\s/.test(v) ? JSON.stringify(v) : q(v)}`]),
  ];
  others.forEach((block, i) => {
    const at = (style.positions[i] ?? 0) % (blocks.length + 1);
    blocks.splice(at, 0, block);
  });
  // Indent directive lines and heredoc delimiters, never heredoc body lines.
  return blocks.map((block) =>
    block.length === 1 ? [style.indent + block[0]] : block.map((l, i) => (i === 0 || i === block.length - 1 ? style.indent + l : l)),
  );
}

const join = (blocks: string[][], eol: string): string => blocks.flat().join(eol);

const anyChar = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) },
);
const promptArb = fc
  .array(
    fc.oneof(
      fc.string({ unit: anyChar, maxLength: 12 }),
      fc.constantFrom('\n', '\r\n', '\r', 'END', '  END ', 'END_1', '#', '"', '\\', '\\n', '<<END', '\t', ' ', 'MODE autopilot'),
    ),
    { maxLength: 25 },
  )
  .map((parts) => parts.join('').replaceAll('\u0000', ''));

const modelArb = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_.][A-Za-z0-9_.:/@+[\]"-]{0,40}$/),
  fc.constant('m'.repeat(200)),
);
const configArb: fc.Arbitrary<AgentfileConfig> = fc.record(
  {
    model: modelArb,
    max_turns: fc.integer({ min: 1, max: 10_000 }),
    pod_timeout_minutes: fc.integer({ min: 1, max: 10_080 }),
    auto_close: fc.boolean(),
    sandbox_type: fc.constantFrom(...SANDBOX_TYPES),
    channel_id: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    max_iterations: fc.integer({ min: 1, max: 1000 }),
    iteration_timeout_sec: fc.integer({ min: 1, max: 86_400 }),
    permission_mode: fc.constantFrom('default', 'acceptEdits', 'bypassPermissions', 'workspace-write', 'auto_edit', 'yolo', 'auto'),
  },
  { requiredKeys: [] },
);
const isControl = (c: string): boolean => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f;
const printable = anyChar.filter((c) => !isControl(c));
const repoNameArb = fc.oneof(
  fc.string({ unit: printable, minLength: 1, maxLength: 60 }),
  fc.stringMatching(/^[0-9]{1,5}$/),
  fc.constant('r'.repeat(255)),
).filter((name) => name.trim() !== '');
const repoArb = fc.oneof(
  fc.constant(null),
  fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }).map((id) => ({ id })),
  repoNameArb.map((name) => ({ name })),
);
const branchArb = fc
  .tuple(
    fc.array(fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_-]{0,12}$/), { minLength: 1, maxLength: 4 }),
    fc.constantFrom('/', '.', '-'),
  )
  .map(([parts, sep]) => parts.join(sep))
  .filter((b) => !b.endsWith('.lock') && b.length <= 200);
const credentialArb = fc
  .stringMatching(/^[A-Z_][A-Z0-9_]{0,20}$/)
  .filter((name) => !name.startsWith('DROVER_') && !name.startsWith('ENV_') && !RESERVED.has(name) && forbiddenEnvName(name) === null);
// ENV names never clash with credential names (that is an error of its own).
const envArb = fc.dictionary(
  fc.stringMatching(/^ENV_[A-Z0-9_]{0,12}$/),
  fc.string({ unit: anyChar, maxLength: 30 }).map((v) => v.replaceAll('\u0000', '')),
  { maxKeys: 4 },
);

const layerArb: fc.Arbitrary<AgentfileLayer> = fc.record({
  prompt: fc.option(promptArb, { nil: null }),
  mode: fc.constantFrom('direct' as const, 'autopilot' as const),
  config: configArb,
  repo: repoArb,
  branch: fc.option(branchArb, { nil: null }),
  credentials: fc.uniqueArray(credentialArb, { maxLength: 5 }),
  env: envArb,
  allow: fc.constant([]),
});

const styleArb: fc.Arbitrary<Style> = fc.record({
  quote: fc.boolean(),
  heredoc: fc.boolean(),
  explicitMode: fc.boolean(),
  indent: fc.constantFrom('', '  ', '\t', ' \t '),
  eol: fc.constantFrom('\n' as const, '\r\n' as const),
  positions: fc.array(fc.nat(), { minLength: 16, maxLength: 16 }),
});

const commentArb = fc
  .tuple(fc.constantFrom('', ' ', '\t', '   '), fc.string({ unit: anyChar, maxLength: 30 }))
  .map(([lead, text]) => `${lead}#${text.replace(/[\n\r]/g, ' ')}`);
const blankArb = fc.constantFrom('', ' ', '\t', '  \t  ', '\u00a0');
const fillerArb = fc.array(fc.oneof(commentArb, blankArb), { maxLength: 3 });

const RUNS = { numRuns: 300 };

/** Any outcome but an AppError VALIDATION_FAILED with the agentfile_layer detail is a failure. */
function parseOrValidationError(text: string): AgentfileLayer | AppError {
  try {
    return parseAgentfileLayer(text);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.extra.details?.[0]?.field).toBe('/agentfile_layer');
    const lines = text.split('\n').length;
    const n = /^line (\d+): /.exec(error.extra.details?.[0]?.message ?? '')?.[1];
    if (n !== undefined) {
      expect(Number(n)).toBeGreaterThanOrEqual(1);
      expect(Number(n)).toBeLessThanOrEqual(lines);
    }
    return error;
  }
}

describe('parseAgentfileLayer: properties', () => {
  it('parse(serialise(layer)) = layer', () => {
    fc.assert(
      fc.property(layerArb, styleArb, (value, style) => {
        const text = join(serialise(value, style), style.eol);
        expect(parseAgentfileLayer(text)).toEqual(value);
      }),
      RUNS,
    );
  });

  it('comment and blank lines between directives change nothing', () => {
    fc.assert(
      fc.property(layerArb, styleArb, fc.array(fillerArb, { minLength: 20, maxLength: 20 }), (value, style, fillers) => {
        const blocks = serialise(value, style);
        const plain = parseAgentfileLayer(join(blocks, style.eol));
        const padded: string[][] = [fillers[0]];
        blocks.forEach((block, i) => padded.push(block, fillers[(i + 1) % fillers.length]));
        expect(parseAgentfileLayer(join(padded, style.eol))).toEqual(plain);
      }),
      RUNS,
    );
  });

  it('arbitrary text either parses or fails with VALIDATION_FAILED, never anything else', () => {
    const fragment = fc.oneof(
      fc.constantFrom(
        'PROMPT ', 'MODE ', 'CONFIG ', 'REPO ', 'BRANCH ', 'CREDENTIAL ', 'ENV ', 'ENV A ', 'prompt ', '<<END', '<<', 'END', '\n', '\r\n', '\r',
        '"', '\\', '\\u', '\\u00', '=', ' = ', '#', ' ', '\t', 'max_turns', 'model', 'auto_close', 'channel_id', 'true', '12',
        '-1', '0', '9007199254740993', 'direct', 'autopilot', 'worktree', 'plan', 'DROVER_X', 'PATH', 'main', '..', '@{', '/',
        '\u0000', '\u2028', '\ufeff',
      ),
      fc.string({ unit: anyChar, maxLength: 6 }),
    );
    const text = fc.oneof(
      fc.string({ unit: anyChar, maxLength: 200 }),
      fc.array(fragment, { maxLength: 40 }).map((parts) => parts.join('')),
    );
    fc.assert(
      fc.property(text, (input) => {
        parseOrValidationError(input);
      }),
      { numRuns: 1000 },
    );
  });

  it('mutating one character of a valid layer never throws anything but VALIDATION_FAILED', () => {
    fc.assert(
      fc.property(layerArb, styleArb, fc.nat(), anyChar, (value, style, at, ch) => {
        const text = join(serialise(value, style), style.eol);
        const i = text.length === 0 ? 0 : at % text.length;
        parseOrValidationError(text.slice(0, i) + ch + text.slice(i + 1));
      }),
      RUNS,
    );
  });
});

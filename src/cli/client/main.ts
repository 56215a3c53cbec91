/**
 * The command line client (docs/cli.md): `drover login`, `tickets`, `pods`, `loops`, `channels`,
 * `runners`, `repos`, `users`, `presets`, `whoami`, `activity`, `events`, plus `drover --help` and `--version`. bin/drover.mjs runs these from
 * a bundle of their own (.build/cli.mjs) that holds none of the server, so a command starts fast.
 */
import { DroverClient } from '../../client/index.ts';
import pkg from '../../../package.json' with { type: 'json' };
import { TOP_USAGE } from '../usage.ts';
import { channelCommands } from './commands/channels.ts';
import { eventCommand } from './commands/events.ts';
import { loginCommand } from './commands/login.ts';
import { loopCommands } from './commands/loops.ts';
import { peopleCommands } from './commands/people.ts';
import { podCommands } from './commands/pods.ts';
import { repositoryCommands } from './commands/repos.ts';
import { runnerCommands } from './commands/runners.ts';
import { ticketCommands } from './commands/tickets.ts';
import { EXIT, UsageError, commandHelp, failure, parseCommand, read, type Command, type CommandContext, type Output } from './framework.ts';
import { resolveConnection } from './profiles.ts';
import { unknownCommand } from '../suggest.ts';

export const COMMANDS: Command[] = [
  loginCommand,
  ...ticketCommands,
  ...podCommands,
  ...loopCommands,
  ...channelCommands,
  ...runnerCommands,
  ...repositoryCommands,
  eventCommand,
  ...peopleCommands,
];

const GROUP_SUMMARIES: Record<string, string> = {
  tickets: 'Tickets and the board.',
  pods: 'Pods: agent runs on runners, and their output.',
  loops: 'Loops (templated prompts run on a schedule or on demand) and their runs.',
  channels: 'Channels where agents and people talk, and their messages.',
  runners: 'The machines that run pods.',
  repos: 'Repositories, their branches and merge requests.',
  users: "The organization's people.",
  presets: "The organization's presets (an agent and agentfile lines; drover admin presets makes them).",
};

/** The words that start a client command (bin/drover.mjs sends these to the client bundle). */
export const CLIENT_WORDS = ['login', 'events', 'whoami', 'activity', ...Object.keys(GROUP_SUMMARIES)];

/** Every first word of `drover` (for "did you mean"). */
export const TOP_WORDS = [...CLIENT_WORDS, 'serve', 'runner', 'admin', 'mcp', 'version', 'help'];

/**
 * The options of every client command, also accepted before the command (`drover --profile work
 * pods list`): moved behind the command's words, where the command's parser reads them.
 */
export function hoistCommonOptions(argv: string[]): string[] {
  const leading: string[] = [];
  let i = 0;
  while (i < argv.length) {
    const word = argv[i];
    if (word === '--json') leading.push(argv[i++]);
    else if (word === '--profile' && i + 1 < argv.length) leading.push(argv[i++], argv[i++]);
    else if (word.startsWith('--profile=')) leading.push(argv[i++]);
    else break;
  }
  if (leading.length === 0) return argv;
  const rest = argv.slice(i);
  const words = rest[0] !== undefined && rest[0] in GROUP_SUMMARIES ? 2 : 1;
  return [...rest.slice(0, words), ...leading, ...rest.slice(words)];
}

function groupHelp(group: string): string {
  const members = COMMANDS.filter((c) => c.name.startsWith(`${group} `));
  const width = Math.max(...members.map((c) => c.name.length));
  return [
    `Usage: drover ${group} <command> [options]`,
    '',
    GROUP_SUMMARIES[group],
    '',
    'Commands:',
    ...members.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    `Run "drover ${group} <command> --help" for a command's options.`,
  ].join('\n');
}

export interface ClientIo {
  out: Output;
  err: Output;
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadableStream;
  signal: AbortSignal;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** The exit code of a command stopped by a signal: 130 (SIGINT) or 143 (SIGTERM), as the abort says. */
const interrupted = (signal: AbortSignal): number => (typeof signal.reason === 'number' ? signal.reason : 130);

/** Runs one client command line; answers its exit code. */
export async function runClient(given: string[], io: ClientIo): Promise<number> {
  const argv = hoistCommonOptions(given);
  const [first, second] = argv;
  if (first === undefined || first === 'help' || first === '--help' || first === '-h') {
    io.out.write(`${TOP_USAGE}\n`);
    return EXIT.OK;
  }
  if (first === 'version' || first === '--version') {
    io.out.write(`${pkg.version}\n`);
    return EXIT.OK;
  }
  let command: Command | undefined;
  let rest: string[];
  if (first in GROUP_SUMMARIES) {
    if (second === undefined || second.startsWith('-') || second === 'help') {
      const asked = second === '--help' || second === '-h' || second === 'help';
      (asked ? io.out : io.err).write(`${groupHelp(first)}\n`);
      return asked ? EXIT.OK : EXIT.USAGE;
    }
    command = COMMANDS.find((c) => c.name === `${first} ${second}`);
    if (!command) {
      const names = COMMANDS.filter((c) => c.name.startsWith(`${first} `)).map((c) => c.name.slice(first.length + 1));
      io.err.write(unknownCommand(second, names, `${first} `, `drover ${first} --help`));
      return EXIT.USAGE;
    }
    rest = argv.slice(2);
  } else {
    command = COMMANDS.find((c) => c.name === first);
    if (!command) {
      const serverSide = TOP_WORDS.includes(first) && !CLIENT_WORDS.includes(first);
      io.err.write(serverSide ? `drover: --profile and --json go with the API client commands, not '${first}'\n` : unknownCommand(first, TOP_WORDS));
      return EXIT.USAGE;
    }
    rest = argv.slice(1);
  }
  try {
    const parsed = parseCommand(command, rest);
    if (read.flag(parsed, 'help')) {
      io.out.write(`${commandHelp(command)}\n`);
      return EXIT.OK;
    }
    let client: DroverClient | undefined;
    const ctx: CommandContext = {
      client: () => (client ??= new DroverClient(resolveConnection(io.env, read.string(parsed, 'profile')))),
      json: read.flag(parsed, 'json'),
      raw: read.flag(parsed, 'raw'),
      out: io.out,
      err: io.err,
      env: io.env,
      signal: io.signal,
      readStdin: () => readAll(io.stdin),
    };
    const code = (await command.run(ctx, parsed)) ?? EXIT.OK;
    return io.signal.aborted ? interrupted(io.signal) : code;
  } catch (error) {
    if (io.signal.aborted) return interrupted(io.signal);
    if (error instanceof UsageError) return failure(error, io.err, command);
    return failure(error, io.err);
  }
}

/** The bundle's entry (bin/drover.mjs): the process's own streams, environment and signals. */
export async function main(argv: string[]): Promise<void> {
  const controller = new AbortController();
  // Streams stop at once (and the command exits 130/143); a request in flight gets 0.2 s to end.
  const stop = (code: number) => () => {
    controller.abort(code);
    setTimeout(() => process.exit(code), 200).unref();
  };
  process.once('SIGINT', stop(130));
  process.once('SIGTERM', stop(143));
  const code = await runClient(argv, { out: process.stdout, err: process.stderr, env: process.env, stdin: process.stdin, signal: controller.signal });
  // Idle keep-alive sockets must not hold the process: exit once what was written has been flushed.
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
}

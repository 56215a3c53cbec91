/**
 * Which agents a runner can run (docs/agents.md: "A runner advertises the built-in agents whose
 * program it finds"): a built-in agent when its program is an executable file in one of the PATH
 * directories; a custom agent when its command is.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { BUILTIN_AGENT_SLUGS, agentProgram, isBuiltinAgentSlug } from './builtin.ts';
import type { CustomAgentDefinition } from './types.ts';

async function isExecutableFile(file: string): Promise<boolean> {
  try {
    // stat follows symlinks: a link to an executable counts, a directory (which has x bits) does not.
    const info = await stat(file);
    if (!info.isFile()) return false;
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The PATH directories that are searched. Empty and relative entries are skipped: POSIX reads
 * them relative to the current directory, which for an agent is the workspace — a checked-out
 * repository must not be able to supply a program named `claude`.
 */
export function pathDirectories(pathEnv: string): string[] {
  return [...new Set(pathEnv.split(path.delimiter).filter((dir) => dir.length > 0 && path.isAbsolute(dir)))];
}

/** Lookups under way, by command and PATH: the callers that ask meanwhile share their answer. */
const lookups = new Map<string, Promise<string | null>>();

/**
 * The absolute path of the executable `command` would run, or `null` if there is none. Asked
 * again while the same lookup is under way (a burst of pods of one agent), the answer of the one
 * under way is shared, not cached: a lookup that ended is never reused (docs/runners.md "What a
 * pod start costs").
 */
export function findExecutable(command: string, pathEnv: string): Promise<string | null> {
  const key = `${command}\0${pathEnv}`;
  let lookup = lookups.get(key);
  if (!lookup) {
    lookup = lookUp(command, pathEnv).finally(() => lookups.delete(key));
    lookups.set(key, lookup);
  }
  return lookup;
}

async function lookUp(command: string, pathEnv: string): Promise<string | null> {
  if (command.length === 0 || command.includes('\0')) return null;
  if (command.includes('/')) {
    return path.isAbsolute(command) && (await isExecutableFile(command)) ? command : null;
  }
  for (const dir of pathDirectories(pathEnv)) {
    const candidate = path.join(dir, command);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/**
 * The slugs of the agents available with this PATH: built-in agents in their canonical order
 * (`shell` needs `bash`), then custom agents in the order given. A custom agent whose command is a
 * relative path (`./scripts/agent.sh`) is resolved against the workspace at spawn time, which
 * does not exist yet, so it is listed without a check. Custom agents cannot shadow a built-in slug.
 */
export async function detectAgents(pathEnv: string, customAgents: CustomAgentDefinition[] = []): Promise<string[]> {
  const found: string[] = [];
  const builtins = await Promise.all(
    BUILTIN_AGENT_SLUGS.map(async (slug) => ((await findExecutable(agentProgram(slug) ?? '', pathEnv)) ? slug : null)),
  );
  for (const slug of builtins) if (slug) found.push(slug);

  const seen = new Set<string>(found);
  for (const agent of customAgents) {
    if (isBuiltinAgentSlug(agent.slug) || seen.has(agent.slug)) continue;
    const command = agent.command;
    const relativePath = command.includes('/') && !path.isAbsolute(command);
    if (relativePath || (await findExecutable(command, pathEnv))) {
      found.push(agent.slug);
      seen.add(agent.slug);
    }
  }
  return found;
}

/** How long `<program> --version` may take (some CLIs start a whole runtime first). */
const VERSION_TIMEOUT_MS = 15_000;

/** The first version number a `--version` output names (`2.1.197 (Claude Code)`, `codex-cli 0.169.0`, `GNU bash, version 5.2.15(1)-release`). */
export function parseVersion(output: string): string | null {
  const match = /\b(\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z.-]+)?)/.exec(output);
  return match ? match[1] : null;
}

/**
 * The agents available with this PATH (see detectAgents) with their versions, from
 * `<program> --version` (null when it says none or takes too long): what a runner advertises.
 * They run in `home`, made empty for them (nothing of the runner's configuration) and removed after;
 * one left by a process killed meanwhile is emptied by the next call.
 */
export async function detectAgentVersions(pathEnv: string, home: string): Promise<{ slug: string; version: string | null }[]> {
  const slugs = await detectAgents(pathEnv);
  await rm(home, { recursive: true, force: true });
  await mkdir(home, { recursive: true, mode: 0o700 });
  try {
    return await Promise.all(
      slugs.map(async (slug) => {
        const program = await findExecutable(agentProgram(slug) ?? '', pathEnv);
        return { slug, version: program ? parseVersion(await versionOutput(program, pathEnv, home)) : null };
      }),
    );
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

function versionOutput(program: string, pathEnv: string, home: string): Promise<string> {
  return new Promise((resolve) => {
    // No stdin (a CLI may wait for piped input), run where nothing of the runner's lies.
    const child = spawn(program, ['--version'], { cwd: home, env: { PATH: pathEnv, HOME: home, LANG: 'C.UTF-8' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const take = (chunk: Buffer) => {
      if (output.length < 64 * 1024) output += chunk.toString('utf8');
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const timer = setTimeout(() => child.kill('SIGKILL'), VERSION_TIMEOUT_MS);
    child.once('error', () => {
      clearTimeout(timer);
      resolve('');
    });
    child.once('close', () => {
      clearTimeout(timer);
      resolve(output);
    });
  });
}

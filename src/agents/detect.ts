/**
 * Which agents a runner can run (contract §4: "A runner advertises the agents whose program it
 * finds"): a built-in agent when its program is an executable file in one of the PATH
 * directories; a custom agent when its command is.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
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

/** The absolute path of the executable `command` would run, or `null` if there is none. */
export async function findExecutable(command: string, pathEnv: string): Promise<string | null> {
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

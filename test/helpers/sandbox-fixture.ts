/**
 * REAL processes for delivery and sandbox tests: a `drover serve` on its own database, a runner
 * (with its default sandbox) registered to it, and a bare repository, registered by its local path.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { DatabaseKind } from '../../src/store/db.ts';
import type { TestDatabase } from './databases.ts';
import { bareRepository } from './git-fixture.ts';
import { podClient } from './pod-client.ts';
import { runnerPath, startRunnerProcess, tempDir, waitFor, type RunnerProcess } from './runner-process.ts';
import { createProcessTestDatabase, http, startServerProcess, type ServerProcess } from './server-process.ts';

export interface SandboxFixtureOptions {
  kind: DatabaseKind;
  adminToken: string;
  /** Names the scratch directory: `drover-e2e-<name>-…`. */
  name: string;
  runnerName: string;
  /** The runner's pod slots (its default when not given). */
  runnerMaxPods?: number;
  repository: { name: string; fullName: string; files: Record<string, string>; token?: string };
  /** More server environment. */
  serverEnv?: Record<string, string>;
  /** Called with the runner's work dir before the runner starts (an `agent-home/` template, say). */
  prepareWorkDir?(workDir: string): void;
}

export interface SandboxFixture {
  database: TestDatabase;
  server: ServerProcess;
  runner: RunnerProcess;
  /** Temp dir of the test: the runner's HOME, its work dir (`runner/`), the repository. */
  scratch: string;
  apiKey: string;
  repo: { bare: string; work: string };
  repositoryId: number;
  /** Stops the runner and the server, removes the database and the scratch dir. */
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 90_000;

export async function startSandboxFixture(options: SandboxFixtureOptions): Promise<SandboxFixture> {
  const scratch = tempDir(options.name);
  const started: Partial<Omit<SandboxFixture, 'stop'>> = { scratch };
  const stop = async () => {
    await started.runner?.stop();
    await started.server?.stop();
    await started.database?.cleanup();
    fs.rmSync(scratch, { recursive: true, force: true });
  };
  try {
    const database = (started.database = await createProcessTestDatabase(options.kind));
    const repo = (started.repo = bareRepository(scratch, options.repository.name, options.repository.files));
    const server = (started.server = await startServerProcess({
      dataDir: database.dataDir,
      timeoutMs: START_TIMEOUT_MS,
      env: { ...database.env, DROVER_ADMIN_TOKEN: options.adminToken, DROVER_LOG_LEVEL: 'warn', ...options.serverEnv },
    }));
    const apiKey = (started.apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim());
    const c = podClient(
      () => server.url,
      () => apiKey,
      options.adminToken,
    );
    const workDir = path.join(scratch, 'runner');
    options.prepareWorkDir?.(workDir);
    const runner = (started.runner = await startRunnerProcess({
      server: server.url,
      token: await c.registrationToken(),
      workDir,
      name: options.runnerName,
      ...(options.runnerMaxPods === undefined ? {} : { maxPods: options.runnerMaxPods }),
      env: { PATH: runnerPath(), HOME: scratch, LANG: 'C.UTF-8' },
      timeoutMs: START_TIMEOUT_MS,
    }));
    await waitFor(async () => (await c.runnerStatus(runner.runnerId)) === 'online', { what: 'the runner online' });
    const { name, fullName, token } = options.repository;
    const created = await http(server.url, 'POST', '/api/v1/admin/orgs/default/repositories', {
      bearer: options.adminToken,
      body: { name, full_name: fullName, provider: 'git', url: repo.bare, default_branch: 'main', ...(token === undefined ? {} : { token }) },
    });
    expect(created.status, created.text).toBe(201);
    const repositoryId = (created.body as { repository: { id: number } }).repository.id;
    return { database, server, runner, scratch, apiKey, repo, repositoryId, stop };
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
}

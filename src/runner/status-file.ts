import path from 'node:path';
import { readPodFile } from './pod-tree.ts';

/**
 * The status an autopilot iteration wrote. The file is in a directory the agent can write, so it
 * is read without following a link, non-blocking, and only as a small regular file (./pod-tree.ts).
 */
export function readStatus(file: string): { status: string; summary?: string } | null {
  try {
    const text = readPodFile(path.dirname(file), path.basename(file), 64 * 1024);
    if (text === null) return null;
    const value = JSON.parse(text) as { status?: unknown; summary?: unknown };
    if (typeof value.status !== 'string') return null;
    return { status: value.status, summary: typeof value.summary === 'string' ? value.summary : undefined };
  } catch {
    return null;
  }
}

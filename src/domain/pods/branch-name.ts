import { hasWhitespaceOrControl } from './agentfile-syntax.ts';

export const MAX_BRANCH_LENGTH = 200;

/** null when `name` is a usable git branch name (git check-ref-format's rules, plus no whitespace). */
export function branchProblem(name: string): string | null {
  if (name.length === 0) return 'must not be empty';
  if (name.length > MAX_BRANCH_LENGTH) return `must be at most ${MAX_BRANCH_LENGTH} characters`;
  if (hasWhitespaceOrControl(name)) return 'must not contain whitespace or control characters';
  if (/[~^:?*[\\]/.test(name)) return 'must not contain any of ~ ^ : ? * [ \\';
  if (name.startsWith('-')) return 'must not start with -';
  if (name.includes('..')) return 'must not contain ..';
  if (name.includes('@{') || name === '@') return 'must not be @ or contain @{';
  if (name.startsWith('/') || name.endsWith('/') || name.includes('//')) return 'must not start or end with / or contain //';
  if (name.endsWith('.') || name.endsWith('.lock')) return 'must not end with . or .lock';
  if (name.split('/').some((part) => part.startsWith('.'))) return 'must not have a path component starting with .';
  return null;
}

import { describe, expect, it } from 'vitest';
import { RunnerOutbox } from '../../src/runner/outbox.ts';

describe('RunnerOutbox', () => {
  it('gives back what it kept in order, once', () => {
    const outbox = new RunnerOutbox();
    outbox.keep({ type: 'pod_started', key: 'p1' });
    outbox.keep({ type: 'pod_output', key: 'p1', data: 'a' });
    outbox.keep({ type: 'pod_output', key: 'p1', data: 'b' });
    expect(outbox.takeAll()).toEqual([
      { type: 'pod_started', key: 'p1' },
      { type: 'pod_output', key: 'p1', data: 'a' },
      { type: 'pod_output', key: 'p1', data: 'b' },
    ]);
    expect(outbox.takeAll()).toEqual([]);
  });

  it('drops the oldest output past its bound, never a pod_started', () => {
    const outbox = new RunnerOutbox(10);
    outbox.keep({ type: 'pod_output', key: 'p1', data: '12345' });
    outbox.keep({ type: 'pod_started', key: 'p2' });
    outbox.keep({ type: 'pod_output', key: 'p1', data: '678' });
    outbox.keep({ type: 'pod_output', key: 'p2', data: 'abcd' }); // 12 chars: the oldest output goes
    expect(outbox.takeAll()).toEqual([
      { type: 'pod_started', key: 'p2' },
      { type: 'pod_output', key: 'p1', data: '678' },
      { type: 'pod_output', key: 'p2', data: 'abcd' },
    ]);
    // The count starts again after takeAll: 10 chars fit.
    outbox.keep({ type: 'pod_output', key: 'p1', data: '0123456789' });
    expect(outbox.takeAll()).toHaveLength(1);
  });
});

/**
 * The request counter and histogram of GET /metrics (src/api/request-metrics.ts), counted without
 * prom-client: what it writes parses as Prometheus text, with prom-client's buckets (an observation
 * on a bound counts in that bucket), cumulative counts, sums and escaped label values.
 */
import { describe, expect, it } from 'vitest';
import { RequestMetrics } from '../../src/api/request-metrics.ts';
import { parsePrometheusText } from '../helpers/prometheus.ts';

describe('RequestMetrics', () => {
  it('counts each series and fills the histogram buckets as prom-client does', () => {
    const metrics = new RequestMetrics();
    for (const seconds of [0.001, 0.005, 0.007, 0.3, 20]) metrics.observe('GET', '/t', 200, seconds);
    metrics.observe('POST', 'a "quoted" \\ route\nx', 201, 0.02);
    const parsed = parsePrometheusText(metrics.text());
    expect(parsed.types.get('drover_http_requests_total')).toBe('counter');
    expect(parsed.types.get('drover_http_request_duration_seconds')).toBe('histogram');
    const get = { method: 'GET', route: '/t', status: '200' };
    expect(parsed.value('drover_http_requests_total', get)).toBe(5);
    expect(parsed.value('drover_http_request_duration_seconds_count', get)).toBe(5);
    expect(parsed.value('drover_http_request_duration_seconds_sum', get)).toBeCloseTo(20.313, 9);
    const bucket = (le: string) => parsed.value('drover_http_request_duration_seconds_bucket', { ...get, le });
    expect([bucket('0.005'), bucket('0.01'), bucket('0.25'), bucket('0.5'), bucket('10'), bucket('+Inf')]).toEqual([2, 3, 3, 4, 4, 5]);
    const post = { method: 'POST', route: 'a "quoted" \\ route\nx', status: '201' };
    expect(parsed.value('drover_http_requests_total', post)).toBe(1);
    expect(parsed.value('drover_http_request_duration_seconds_bucket', { ...post, le: '0.025' })).toBe(1);
  });
});

/**
 * The request counter and latency histogram of `GET /metrics`, counted in plain numbers per
 * series and written in the Prometheus text format at scrape time. Observed on every request:
 * prom-client's labelled children validate and hash their labels on every call, which cost more
 * than the rest of the response hook (README "Where a request's time goes").
 */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Series {
  labels: string;
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative); the last one is +Inf. */
  buckets: Float64Array;
}

const escape = (value: string) => value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');

export class RequestMetrics {
  /** By `method route status`: a request costs one map lookup. */
  private readonly series = new Map<string, Series>();

  observe(method: string, route: string, status: number, seconds: number): void {
    const name = `${method} ${route} ${status}`;
    let series = this.series.get(name);
    if (!series) {
      series = { labels: `method="${escape(method)}",route="${escape(route)}",status="${status}"`, count: 0, sum: 0, buckets: new Float64Array(BUCKETS.length + 1) };
      this.series.set(name, series);
    }
    series.count++;
    series.sum += seconds;
    let i = 0;
    while (i < BUCKETS.length && seconds > BUCKETS[i]) i++;
    series.buckets[i]++;
  }

  /** `drover_http_requests_total` (counter) and `drover_http_request_duration_seconds` (histogram), as prom-client writes them. */
  text(): string {
    const lines = [
      '# HELP drover_http_requests_total HTTP requests answered, by method, route template and status',
      '# TYPE drover_http_requests_total counter',
    ];
    for (const s of this.series.values()) lines.push(`drover_http_requests_total{${s.labels}} ${s.count}`);
    lines.push(
      '',
      '# HELP drover_http_request_duration_seconds Time to answer HTTP requests, by method, route template and status',
      '# TYPE drover_http_request_duration_seconds histogram',
    );
    for (const s of this.series.values()) {
      let cumulative = 0;
      BUCKETS.forEach((bound, i) => {
        cumulative += s.buckets[i];
        lines.push(`drover_http_request_duration_seconds_bucket{le="${bound}",${s.labels}} ${cumulative}`);
      });
      lines.push(`drover_http_request_duration_seconds_bucket{le="+Inf",${s.labels}} ${s.count}`);
      lines.push(`drover_http_request_duration_seconds_sum{${s.labels}} ${s.sum}`);
      lines.push(`drover_http_request_duration_seconds_count{${s.labels}} ${s.count}`);
    }
    return lines.join('\n') + '\n';
  }
}

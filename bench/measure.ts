import autocannon from 'autocannon';
import type { CpuPerUnit } from './cpu.js';
import type { BenchRequest, Draw } from './scenarios.js';

/** What one side (service, HTTP ceiling or database ceiling) achieved in one scenario. */
export interface Measurement {
  /** Transactions per second: requests, or (scenario 6) added participants. */
  perSecond: number;
  p50: number;
  p99: number;
  /** 4xx and 5xx responses, socket errors and timeouts (pgbench: failed transactions); a revalidation's 304 is its answer. */
  errors: number;
  count: number;
  /** Where the machine's CPU went, per unit (bench/cpu.ts); measured for the service and the bare HTTP server. */
  cpu?: CpuPerUnit;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

export interface LoadOptions {
  connections: number;
  duration: number;
}

/**
 * Drives `url` with autocannon: each connection sends a fresh draw's requests in order (an add, then the
 * delete of what it added), for a fixed time. `rewrite` turns a request into the HTTP ceiling's equivalent.
 */
export async function drive(
  url: string,
  draw: () => Draw,
  options: LoadOptions,
  rewrite = (request: BenchRequest, _index: number) => request,
): Promise<Measurement> {
  const perDraw = draw().requests.length;
  type Context = { draw?: Draw };
  const requests = Array.from({ length: perDraw }, (_, index) => ({
    setupRequest: (request: autocannon.Request, context: Context) => {
      if (index === 0 || !context.draw) context.draw = draw();
      const next = rewrite(context.draw.requests[index] as BenchRequest, index);
      return { ...request, method: next.method, path: next.path, headers: next.headers, body: next.body };
    },
  }));
  const result = await autocannon({
    url,
    connections: options.connections,
    duration: options.duration,
    requests: requests as autocannon.Request[],
  });
  return {
    perSecond: result.requests.total / perDraw / options.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result['4xx'] + result['5xx'] + result.errors + result.timeouts,
    count: result.requests.total,
  };
}

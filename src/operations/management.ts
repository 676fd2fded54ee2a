import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { Registry } from 'prom-client';
import type { Database } from '../db/database.js';

export interface ManagementOptions {
  db: Database;
  metrics: Registry;
  logger?: FastifyBaseLogger;
  /** How long the readiness probe waits for the database. */
  readinessTimeoutMs?: number;
}

/** Resolves to true when the database answers within `ms`, false when it fails or is too slow. */
async function databaseAnswers(db: Database, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([db.query('SELECT 1').then(() => true, () => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The management port: liveness, readiness and Prometheus metrics, apart from the API so that it can stay
 * on loopback (or an internal network) and needs no credentials. Readiness asks the database every time,
 * so it turns ready again by itself when the database comes back; it answers 503 once shutdown began.
 */
export function buildManagementServer(options: ManagementOptions) {
  const app = Fastify({ loggerInstance: options.logger });
  const timeoutMs = options.readinessTimeoutMs ?? 2000;
  let draining = false;

  app.get('/health/live', async () => ({ status: 'UP' }));

  app.get('/health/ready', async (_request, reply) => {
    if (draining) return reply.status(503).send({ status: 'DOWN', reason: 'shutting down' });
    const up = await databaseAnswers(options.db, timeoutMs);
    return reply.status(up ? 200 : 503).send({ status: up ? 'UP' : 'DOWN', database: up ? 'UP' : 'DOWN' });
  });

  app.get('/metrics', async (_request, reply) =>
    reply.type(options.metrics.contentType).send(await options.metrics.metrics()),
  );
  /** `drain` makes readiness answer 503 from then on, so that balancers stop sending traffic. */
  return { server: app, drain: () => void (draining = true) };
}

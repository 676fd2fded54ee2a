import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { Registry } from 'prom-client';
import type { Database } from '../db/database.js';

/** What readiness says of the hot standbys (DATABASE_READ_URLS). */
interface ReplicationState {
  status(): { standbys: ReadonlyArray<{ name: string; state: string; lagSeconds: number | null; reading: boolean }> };
}

export interface ManagementOptions {
  db: Database;
  metrics: Registry;
  /** With hot standbys, readiness lists them and stays ready (read-only) while one of them takes the reads. */
  replication?: ReplicationState;
  logger?: FastifyBaseLogger;
  /** How long the readiness probe waits for the database. */
  readinessTimeoutMs?: number;
  /** The registry's version (package.json), in the liveness answer: an operator sees at once which one an instance runs, mid-upgrade. */
  version?: string;
}

/** Resolves to true when the database answers within `ms`, false when it fails or is too slow. */
async function databaseAnswers(db: Database, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([
      db.query('SELECT 1').then(
        () => true,
        () => false,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The management port: liveness, readiness and Prometheus metrics, apart from the API so that it can stay
 * on loopback (or an internal network) and needs no credentials. Readiness asks the database every time,
 * so it turns ready again by itself when the database comes back; it answers 503 once shutdown began. With hot
 * standbys it says `READ_ONLY` (200) while the primary is away and a standby takes the reads.
 */
export function buildManagementServer(options: ManagementOptions) {
  const app = Fastify({ loggerInstance: options.logger });
  const timeoutMs = options.readinessTimeoutMs ?? 2000;
  let draining = false;

  app.get('/health/live', async () => ({ status: 'UP', ...(options.version ? { version: options.version } : {}) }));

  app.get('/health/ready', async (_request, reply) => {
    if (draining) return reply.status(503).send({ status: 'DOWN', reason: 'shutting down' });
    const up = await databaseAnswers(options.db, timeoutMs);
    const database = up ? 'UP' : 'DOWN';
    if (!options.replication) return reply.status(up ? 200 : 503).send({ status: database, database });
    const standbys = options.replication
      .status()
      .standbys.map(({ name, state, lagSeconds, reading }) => ({ name, state, lagSeconds, reading }));
    // Without its primary the service still answers every read from a standby: a balancer must keep sending them.
    const readOnly = !up && standbys.some((standby) => standby.reading);
    return reply
      .status(up || readOnly ? 200 : 503)
      .send({ status: up ? 'UP' : readOnly ? 'READ_ONLY' : 'DOWN', database, standbys });
  });

  app.get('/metrics', async (_request, reply) =>
    reply.type(options.metrics.contentType).send(await options.metrics.metrics()),
  );
  /** `drain` makes readiness answer 503 from then on, so that balancers stop sending traffic. */
  return { server: app, drain: () => void (draining = true) };
}

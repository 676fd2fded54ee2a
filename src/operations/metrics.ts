import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { synchronousHook } from '../http/synchronous-hook.js';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Database } from '../db/database.js';
import { SECURITY_EVENTS, type SecurityEvent } from '../http/security-events.js';

/** What the metrics show of one delivery target; the wiring reads it from the deliveries' status. */
interface DeliveryCounts {
  target: string;
  pending: number;
  setAside: number;
  oldestPendingSeconds: number;
  attempts: number;
}

/** What the metrics show of the hot standbys; the wiring reads it from the replication's status. */
interface ReplicationCounts {
  primary: boolean;
  standbys: ReadonlyArray<{ name: string; lagSeconds: number | null; state: string; reading: boolean; reads: number }>;
}

/** What the metrics show of a certificate the registry publishes or presents; the wiring reads it from the status. */
interface CertificateDays {
  use: string;
  accessPoint?: { identifier: string; title: string };
  endpoint?: string;
  daysLeftExactly: number;
}

/** What the metrics show of a coming removal instant of processes and document types; the wiring reads it from the catalogue. */
interface RemovalCounts {
  removedFrom: string;
  participants: number;
  entries: number;
}

/** The participant search in memory (the primary's): participants held, and 1 while it answers searches. */
export function watchSearchIndex(registry: Registry, index: { readonly state: string; readonly size: number }): void {
  new Gauge({
    name: 'participant_search_memory_participants',
    help: 'Participants the search in memory holds (live or not yet purged)',
    registers: [registry],
    collect() {
      this.set(index.size);
    },
  });
  new Gauge({
    name: 'participant_search_memory_ready',
    help: '1 while the search in memory answers participant searches; 0 while it loads, after a failure, or when switched off',
    registers: [registry],
    collect() {
      this.set(index.state === 'ready' ? 1 : 0);
    },
  });
}

/** Norwegian organizations of live participants flagged against the national register, by state (each scrape reads them). */
export function watchRegisterFlags(registry: Registry, flagCounts: () => Promise<Record<string, number>>): void {
  new Gauge({
    name: 'national_register_flagged_organizations',
    help:
      'Norwegian organizations of live participants that Enhetsregisteret has deleted (deleted), does not know (unknown) ' +
      'or has not confirmed since they were registered while it did not answer (unconfirmed), by state',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      for (const [state, count] of Object.entries(await flagCounts().catch(() => ({})))) this.set({ state }, count);
    },
  });
}

/**
 * The Prometheus registry of one application: its requests, its database pool, its deliveries, its certificates, its
 * standbys and the process itself.
 */
export function createMetrics(
  db: Database,
  openConnections: () => Promise<number>,
  deliveryStatus: () => Promise<readonly DeliveryCounts[]>,
  certificates: () => Promise<readonly CertificateDays[]> = async () => [],
  replication?: () => ReplicationCounts,
  removals: () => Promise<readonly RemovalCounts[]> = async () => [],
): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // With REGISTRY_WORKERS > 1 each scrape reaches one worker: the pid says which.
  new Gauge({ name: 'process_pid', help: 'Id of the process that answered this scrape', registers: [registry] }).set(
    process.pid,
  );
  new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving a request to sending its answer, by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  new Gauge({
    name: 'db_pool_connections',
    help: 'Database connections by state: total (open), idle, waiting (requests queued for a connection)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const stats = db.stats?.();
      if (!stats) return;
      this.set({ state: 'total' }, stats.total);
      this.set({ state: 'idle' }, stats.idle);
      this.set({ state: 'waiting' }, stats.waiting);
    },
  });
  const deliveryGauges: Array<[string, string, (status: DeliveryCounts) => number]> = [
    [
      'delivery_pending_changes',
      'Participant changes not yet delivered, by target (sml, directory)',
      (status) => status.pending,
    ],
    [
      'delivery_oldest_pending_seconds',
      'Age of the oldest participant change not yet delivered, by target',
      (status) => status.oldestPendingSeconds,
    ],
    [
      'delivery_failed_attempts',
      'Failed delivery attempts since the last success, by target',
      (status) => status.attempts,
    ],
    [
      'delivery_set_aside_organizations',
      'Organizations set aside (failing while the target answers the others), by target',
      (status) => status.setAside,
    ],
  ];
  for (const [name, help, value] of deliveryGauges) {
    new Gauge({
      name,
      help,
      labelNames: ['target'] as const,
      registers: [registry],
      async collect() {
        for (const status of await deliveryStatus().catch(() => [])) this.set({ target: status.target }, value(status));
      },
    });
  }
  const securityEvents = new Counter({
    name: 'registry_security_events_total',
    help: 'Security events (failed sign-ins, locks, refusals by a per-address or per-user limit, password changes), by event',
    labelNames: ['event'] as const,
    registers: [registry],
  });
  // Every event from the start, at 0: an alert on a rate needs the series before the first event.
  for (const event of SECURITY_EVENTS) securityEvents.inc({ event }, 0);
  new Gauge({
    name: 'certificate_days_left',
    help:
      'Days until a certificate the registry publishes or presents expires (negative once expired), by use: smp (in use), ' +
      'smp_next (announced), client (fixed SML and Directory client certificate), access_point (with the access point and endpoint)',
    labelNames: ['use', 'access_point', 'access_point_id', 'endpoint'] as const,
    registers: [registry],
    async collect() {
      // Read afresh: a certificate replaced or an endpoint removed leaves no series behind.
      this.reset();
      for (const certificate of await certificates().catch(() => [])) {
        const { use, accessPoint, endpoint = '', daysLeftExactly } = certificate;
        this.set(
          { use, access_point: accessPoint?.title ?? '', access_point_id: accessPoint?.identifier ?? '', endpoint },
          daysLeftExactly,
        );
      }
    },
  });
  if (replication) replicationMetrics(registry, replication);
  removalMetrics(registry, removals);
  new Gauge({
    name: 'http_open_connections',
    help: 'Client connections currently open on the API port',
    registers: [registry],
    async collect() {
      this.set(await openConnections());
    },
  });
  return registry;
}

/** Counts one security event in the registry's `registry_security_events_total`. */
export function securityEventCounter(registry: Registry): (event: SecurityEvent) => void {
  const counter = registry.getSingleMetric('registry_security_events_total') as Counter<'event'>;
  return (event) => counter.inc({ event });
}

/** Per coming removal instant (code-list removal dates), how many live participants lose what: counts, never ids. */
function removalMetrics(registry: Registry, removals: () => Promise<readonly RemovalCounts[]>): void {
  const gauges: Array<[string, string, (count: RemovalCounts) => number]> = [
    [
      'catalogue_removal_participants',
      'Live participants that lose a process or document type at a coming removal instant (within 90 days), by instant',
      (count) => count.participants,
    ],
    [
      'catalogue_removal_entries',
      'Processes and document types live participants lose at a coming removal instant (one per participant), by instant',
      (count) => count.entries,
    ],
  ];
  for (const [name, help, value] of gauges) {
    new Gauge({
      name,
      help,
      labelNames: ['removed_from'] as const,
      registers: [registry],
      async collect() {
        // Read afresh: an instant that has passed leaves no series behind.
        this.reset();
        for (const count of await removals().catch(() => []))
          this.set({ removed_from: count.removedFrom }, value(count));
      },
    });
  }
}

/** The primary's state and each standby's lag, rotation and reads (DATABASE_READ_URLS). */
function replicationMetrics(registry: Registry, replication: () => ReplicationCounts): void {
  new Gauge({
    name: 'db_primary_up',
    help: 'Whether the primary database answered its last check (1) or not (0)',
    registers: [registry],
    collect() {
      this.set(replication().primary ? 1 : 0);
    },
  });
  const standbyGauges: Array<[string, string, (standby: ReplicationCounts['standbys'][number]) => number | null]> = [
    [
      'db_standby_lag_seconds',
      "How far the standby's replay is behind the primary's change log, in seconds (absent while unreachable)",
      (standby) => standby.lagSeconds,
    ],
    [
      'db_standby_in_rotation',
      'Whether the standby may take reads (1): it answers, replays and lags within DATABASE_READ_MAX_LAG_SECONDS',
      (standby) => (standby.state === 'in rotation' ? 1 : 0),
    ],
    [
      'db_standby_reading',
      'Whether the standby routes read from this standby now (1)',
      (standby) => (standby.reading ? 1 : 0),
    ],
  ];
  for (const [name, help, value] of standbyGauges) {
    new Gauge({
      name,
      help,
      labelNames: ['standby'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const standby of replication().standbys) {
          const measured = value(standby);
          if (measured !== null) this.set({ standby: standby.name }, measured);
        }
      },
    });
  }
  const reported = new Map<string, number>();
  new Counter({
    name: 'db_standby_reads_total',
    help: 'Queries of the standby routes each standby answered',
    labelNames: ['standby'] as const,
    registers: [registry],
    collect() {
      for (const standby of replication().standbys) {
        this.inc({ standby: standby.name }, standby.reads - (reported.get(standby.name) ?? 0));
        reported.set(standby.name, standby.reads);
      }
    },
  });
}

/** Counts and times one answered request; `route` is its pattern, so identifiers do not explode the labels. */
export type RequestRecorder = (method: string, route: string, status: number, milliseconds: number) => void;

export function requestRecorder(registry: Registry): RequestRecorder {
  const requests = registry.getSingleMetric('http_requests_total') as Counter<'method' | 'route' | 'status'>;
  const durations = registry.getSingleMetric('http_request_duration_seconds') as Histogram<
    'method' | 'route' | 'status'
  >;
  return (method, route, status, milliseconds) => {
    const labels = { method, route, status: String(status) };
    requests.inc(labels);
    durations.observe(labels, milliseconds / 1000);
  };
}

/** Every request the framework answers, recorded under its route pattern. */
async function requestMetrics(fastify: FastifyInstance, options: { registry: Registry }) {
  const record = requestRecorder(options.registry);
  fastify.addHook(
    'onResponse',
    synchronousHook((request, reply) => {
      record(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime);
    }),
  );
}

export default fp(requestMetrics, { name: 'request-metrics' });

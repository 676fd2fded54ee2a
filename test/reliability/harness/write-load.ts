import { randomBytes } from 'node:crypto';
import { call, type Actors, type Answer, type Call } from './service.js';

/**
 * A write load that remembers what the service answered: per entity, the state of the last write answered
 * 2xx (`acked`) and the state of a write that got no answer because the service died (`pending`). After a
 * restart the entity must be in one of those two states. Refused writes carry a marker that must be nowhere.
 */
export interface Entity {
  kind: 'process' | 'participant';
  /** The qualified identifier value (processes) or organization identifier (participants): unique. */
  key: string;
  acked: string | null;
  pending?: string | null;
}

export class Ledger {
  readonly entities: Entity[] = [];
  readonly refusedMarkers: { kind: Entity['kind']; marker: string }[] = [];
  acknowledged = 0;
  refused = 0;
  unanswered = 0;
  /** The X-Request-Id of each request that got no answer. */
  readonly unansweredIds: string[] = [];
  serverErrors: string[] = [];
}

/** Thrown when the service stopped answering: the worker ends there. */
class Gone extends Error {}

/** Thrown after a 5xx: that write may or may not have happened, so its chain ends and a new one begins. */
class Indeterminate extends Error {}

const SPARE = () => randomBytes(4).toString('hex');

async function send(ledger: Ledger, baseUrl: string, request: Call): Promise<Answer> {
  const requestId = `load-${SPARE()}${SPARE()}`;
  try {
    return await call(baseUrl, { ...request, requestId });
  } catch {
    ledger.unanswered += 1;
    ledger.unansweredIds.push(requestId);
    throw new Gone();
  }
}

interface Context {
  baseUrl: string;
  actors: Actors;
  ledger: Ledger;
  stopped: () => boolean;
}

/** Sends a write that moves `entity` to `next` when it succeeds, and books the answer. */
async function write(ctx: Context, entity: Entity, next: string | null, request: Call): Promise<Answer> {
  entity.pending = next;
  const answer = await send(ctx.ledger, ctx.baseUrl, request);
  if (answer.status >= 500) {
    // Like no answer at all: the database may have committed just before it became unreachable.
    ctx.ledger.serverErrors.push(`${request.method} ${request.path}: ${answer.status} ${answer.body}`);
    throw new Indeterminate();
  }
  delete entity.pending;
  if (answer.status >= 200 && answer.status < 300) {
    entity.acked = next;
    ctx.ledger.acknowledged += 1;
  } else {
    ctx.ledger.refused += 1;
  }
  return answer;
}

/** A write the service must refuse; its marker must not show up anywhere afterwards. */
async function refusedWrite(ctx: Context, kind: Entity['kind'], marker: string, request: Call, expected: number) {
  ctx.ledger.refusedMarkers.push({ kind, marker });
  const answer = await send(ctx.ledger, ctx.baseUrl, request);
  if (answer.status !== expected)
    ctx.ledger.serverErrors.push(
      `expected ${expected} for ${request.method} ${request.path}, got ${answer.status} ${answer.body}`,
    );
  ctx.ledger.refused += 1;
}

function processForm(value: string, title: string) {
  return {
    domain: 'reliability',
    title,
    qualifiedIdentifier: `reliability-procid::${value}`,
    restricted: false,
    visible: true,
    capabilities: [],
    documentTypes: [],
    dependencies: [],
    requiredICDs: [],
  };
}

async function processChain(ctx: Context) {
  const { admin } = ctx.actors;
  const entity: Entity = { kind: 'process', key: `urn:rel:${SPARE()}${SPARE()}`, acked: null };
  ctx.ledger.entities.push(entity);
  let title = `created ${SPARE()}`;
  const added = await write(ctx, entity, title, {
    method: 'POST',
    path: '/rest/api/processes',
    authorization: admin,
    body: processForm(entity.key, title),
  });
  if (added.status !== 201) return;
  const { identifier } = added.json<{ identifier: string }>();
  const marker = `refused-${SPARE()}${SPARE()}`;
  await refusedWrite(
    ctx,
    'process',
    marker,
    { method: 'POST', path: '/rest/api/processes', authorization: admin, body: processForm(entity.key, marker) },
    409,
  );
  for (let i = 0; i < 3 && !ctx.stopped(); i += 1) {
    title = `updated ${i} ${SPARE()}`;
    await write(ctx, entity, title, {
      method: 'PUT',
      path: `/rest/api/processes/${identifier}`,
      authorization: admin,
      body: processForm(entity.key, title),
    });
  }
  if (Math.random() < 0.5)
    await write(ctx, entity, null, {
      method: 'DELETE',
      path: `/rest/api/processes/${identifier}`,
      authorization: admin,
    });
}

async function participantChain(ctx: Context) {
  const [one, two] = ctx.actors.providers as [Actors['providers'][number], Actors['providers'][number]];
  const entity: Entity = { kind: 'participant', key: `rel${SPARE()}${SPARE()}`, acked: null };
  ctx.ledger.entities.push(entity);
  const path = `/rest/api/participants/${encodeURIComponent(`iso6523-actorid-upis::0192:${entity.key}`)}`;
  const form = (contact: string, name = 'Reliability AS') => ({
    icd: '0192',
    organizationIdentifier: entity.key,
    name,
    processes: [],
    contact: { name: contact },
  });
  let contact = `contact ${SPARE()}`;
  const added = await write(ctx, entity, `${one.id}|${contact}`, {
    method: 'POST',
    path: '/rest/api/participants',
    authorization: one.authorization,
    body: form(contact),
  });
  if (added.status !== 201) return;
  const marker = `refused${SPARE()}${SPARE()}`;
  await refusedWrite(
    ctx,
    'participant',
    marker,
    { method: 'POST', path: '/rest/api/participants', authorization: one.authorization, body: form('x', marker) },
    409,
  );
  let owner = one;
  for (let step = 0; step < 4 && !ctx.stopped(); step += 1) {
    if (step === 2) {
      await write(ctx, entity, `${two.id}|${contact}`, {
        method: 'PUT',
        path: `${path}/transfer/${two.id}`,
        authorization: owner.authorization,
      });
      owner = two;
      continue;
    }
    contact = `contact ${step} ${SPARE()}`;
    await write(ctx, entity, `${owner.id}|${contact}`, {
      method: 'PUT',
      path,
      authorization: owner.authorization,
      body: { processes: [], contact: { name: contact } },
    });
  }
  if (Math.random() < 0.5)
    await write(ctx, entity, null, { method: 'DELETE', path, authorization: owner.authorization });
}

/** Runs `workers` loops of process and participant chains until `stop` or until the service is gone. */
export async function runWriteLoad(
  baseUrl: string,
  actors: Actors,
  ledger: Ledger,
  workers: number,
  stopped: () => boolean,
) {
  const ctx: Context = { baseUrl, actors, ledger, stopped };
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      while (!stopped()) {
        try {
          await (worker % 2 === 0 ? processChain(ctx) : participantChain(ctx));
        } catch (error) {
          if (error instanceof Gone) return;
          if (!(error instanceof Indeterminate)) throw error;
        }
      }
    }),
  );
}

/** The state of an entity as the service shows it now, in the ledger's notation. */
async function stateOf(baseUrl: string, actors: Actors, entity: Entity): Promise<string | null> {
  if (entity.kind === 'process') {
    const answer = await call(baseUrl, { path: `/rest/api/processes?size=5&query=${encodeURIComponent(entity.key)}` });
    const hits = answer
      .json<{ content: { qualifiedIdentifier: string; title: string }[] }>()
      .content.filter((process) => process.qualifiedIdentifier === `reliability-procid::${entity.key}`);
    return hits[0]?.title ?? null;
  }
  const answer = await call(baseUrl, {
    path: `/rest/api/participants?size=5&query=${entity.key}`,
    authorization: actors.admin,
  });
  const hits = answer
    .json<{
      content: { organizationIdentifier: string; provider: { identifier: string }; contact: { name: string } }[];
    }>()
    .content.filter((participant) => participant.organizationIdentifier === entity.key);
  return hits[0] ? `${hits[0].provider.identifier}|${hits[0].contact.name}` : null;
}

/**
 * Compares the service with the ledger. Returns the violations; afterwards every entity's state is what the
 * service shows (an unanswered write either happened or not), so the next round starts from the truth.
 */
export async function verify(baseUrl: string, actors: Actors, ledger: Ledger): Promise<string[]> {
  const violations: string[] = [];
  for (const entity of ledger.entities) {
    const actual = await stateOf(baseUrl, actors, entity);
    const allowed = 'pending' in entity ? [entity.acked, entity.pending] : [entity.acked];
    if (!allowed.includes(actual))
      violations.push(`${entity.kind} ${entity.key}: ${actual} is none of ${JSON.stringify(allowed)}`);
    entity.acked = actual;
    delete entity.pending;
  }
  for (const { kind, marker } of ledger.refusedMarkers) {
    const path = kind === 'process' ? `/rest/api/processes?query=${marker}` : `/rest/api/participants?query=${marker}`;
    const answer = await call(baseUrl, { path, authorization: kind === 'participant' ? actors.admin : undefined });
    const total = answer.json<{ totalElements: number }>().totalElements;
    if (total !== 0) violations.push(`refused ${kind} write ${marker} is there`);
  }
  return violations;
}

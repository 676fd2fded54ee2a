import { sharedRuns, Slots } from '../core/concurrency.js';
import { isRecord } from '../core/json.js';
import { callPeer } from '../http/peer-http.js';

/**
 * What Enhetsregisteret said of an organization number: a unit it knows (a main unit or a sub-unit), none, one it
 * has deleted (`slettedato`) or removed (410), or nothing usable in time (down, slow, too large, not its JSON).
 */
export type RegisterAnswer =
  | { kind: 'known'; name: string | null }
  | { kind: 'unknown' }
  | { kind: 'deleted'; deletedOn: string | null }
  | { kind: 'unanswered'; reason: string };

export interface NationalRegisterOptions {
  /** The API's base, e.g. `https://data.brreg.no/enhetsregisteret/api` (NATIONAL_REGISTER_URL). */
  url: string;
  /** The longest a lookup may take, its turn in the queue included (NATIONAL_REGISTER_WAIT_SECONDS). */
  waitMs?: number;
  /** Lookups one client (a provider, the import, the re-check) may have in flight; beyond them it is refused. */
  perClient?: number;
  /** Lookups in flight at once in this process; the others wait their turn, within `waitMs`. */
  atOnce?: number;
  /** How long an answer is kept and given again without asking. */
  keepMs?: number;
}

export interface NationalRegister {
  /** The register's base URL, as configured. */
  readonly url: string;
  /**
   * What the register says of `number` (nine digits) for `client`; `busy` when that client has `perClient` lookups
   * in flight already (a kept answer is given all the same). `fresh`: the register is asked, whatever is kept.
   */
  lookup(number: string, client: string, options?: { fresh?: boolean }): Promise<RegisterAnswer | 'busy'>;
}

/** A unit's JSON is some 2 kB; anything near this is not one. */
export const REGISTER_ANSWER_MAX_BYTES = 64 * 1024;
export const DEFAULT_REGISTER_WAIT_MS = 3000;
const DEFAULT_PER_CLIENT = 2;
const DEFAULT_AT_ONCE = 8;
const DEFAULT_KEEP_MS = 10 * 60_000;
/** Answers kept at most: the oldest goes first. */
const KEPT_ANSWERS = 10_000;

class RegisterFailure extends Error {}

/**
 * Enhetsregisteret's open API (`GET {url}/enheter/{orgnr}`, then `/underenheter/{orgnr}` for a number it has no main
 * unit of), bounded: each lookup within `waitMs` in all and REGISTER_ANSWER_MAX_BYTES per answer, a few in flight per
 * client and per process, the same number asked at once asked once, and definite answers kept for `keepMs`.
 */
export function nationalRegisterClient(options: NationalRegisterOptions): NationalRegister {
  const base = options.url.replace(/\/+$/, '');
  const waitMs = options.waitMs ?? DEFAULT_REGISTER_WAIT_MS;
  const keepMs = options.keepMs ?? DEFAULT_KEEP_MS;
  const clients = new Slots(options.perClient ?? DEFAULT_PER_CLIENT);
  const turns = new Turns(options.atOnce ?? DEFAULT_AT_ONCE);
  const kept = new Map<string, { answer: RegisterAnswer; until: number }>();
  const shared = sharedRuns<RegisterAnswer>();

  const keep = (number: string, answer: RegisterAnswer) => {
    if (answer.kind === 'unanswered') return;
    if (kept.size >= KEPT_ANSWERS) kept.delete(kept.keys().next().value as string);
    kept.set(number, { answer, until: Date.now() + keepMs });
  };
  const ask = async (number: string): Promise<RegisterAnswer> => {
    const deadline = Date.now() + waitMs;
    if (!(await turns.take(deadline))) return { kind: 'unanswered', reason: `no turn to ask within ${waitMs} ms` };
    try {
      const answer = await unitOf(base, number, deadline);
      keep(number, answer);
      return answer;
    } finally {
      turns.release();
    }
  };
  return {
    url: options.url,
    async lookup(number, client, { fresh = false } = {}) {
      const known = kept.get(number);
      if (!fresh && known && known.until > Date.now()) return known.answer;
      if (!clients.take(client)) return 'busy';
      try {
        return await shared(number, () => ask(number));
      } finally {
        clients.release(client);
      }
    },
  };
}

/** The unit the register has under `number`: a main unit, else a sub-unit; unanswered once `deadline` passes. */
async function unitOf(base: string, number: string, deadline: number): Promise<RegisterAnswer> {
  try {
    const main = await askFor(`${base}/enheter/${number}`, number, deadline);
    return main.kind === 'unknown' ? await askFor(`${base}/underenheter/${number}`, number, deadline) : main;
  } catch (error) {
    return { kind: 'unanswered', reason: error instanceof RegisterFailure ? error.message : 'the call failed' };
  }
}

/**
 * One GET of a unit, as the register's documentation describes its answers: 200 with the unit (`slettedato` when it
 * is deleted), 404 none, 410 removed, 400 not an organization number it takes. Anything else is a failure.
 */
async function askFor(url: string, number: string, deadline: number): Promise<RegisterAnswer> {
  const timeoutMs = deadline - Date.now();
  if (timeoutMs <= 0) throw new RegisterFailure('no time left to ask');
  const { status, body } = await callPeer(
    new URL(url),
    { method: 'GET', headers: { accept: 'application/json' }, tls: {} },
    { timeoutMs, maxAnswerBytes: REGISTER_ANSWER_MAX_BYTES },
    RegisterFailure,
  );
  if (status === 404 || status === 400) return { kind: 'unknown' };
  if (status === 410) return { kind: 'deleted', deletedOn: deletedOnOf(parsed(body)) };
  if (status !== 200) throw new RegisterFailure(`answered HTTP ${status}`);
  const unit = parsed(body);
  if (!isRecord(unit) || unit.organisasjonsnummer !== number)
    throw new RegisterFailure('answered with something that is not this unit');
  const deletedOn = deletedOnOf(unit);
  if (deletedOn !== null) return { kind: 'deleted', deletedOn };
  return { kind: 'known', name: typeof unit.navn === 'string' ? unit.navn.slice(0, 256) : null };
}

function parsed(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** The unit's `slettedato` when it is a date (`YYYY-MM-DD`); else null. */
function deletedOnOf(unit: unknown): string | null {
  const date = isRecord(unit) ? unit.slettedato : undefined;
  return typeof date === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(date) ? date : null;
}

/** A fixed number of turns; a taker waits for one in order, until its deadline. */
class Turns {
  private free: number;
  private readonly waiting: Array<(taken: boolean) => void> = [];

  constructor(count: number) {
    this.free = count;
  }

  take(deadline: number): Promise<boolean> {
    if (this.free > 0) {
      this.free -= 1;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => {
          const index = this.waiting.indexOf(wake);
          if (index >= 0) this.waiting.splice(index, 1);
          resolve(false);
        },
        Math.max(deadline - Date.now(), 0),
      );
      const wake = (taken: boolean) => {
        clearTimeout(timer);
        resolve(taken);
      };
      this.waiting.push(wake);
    });
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next(true);
    else this.free += 1;
  }
}

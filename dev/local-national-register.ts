import type http from 'node:http';
import { fileURLToPath } from 'node:url';
import { startLocalServer, type Failure, type LocalServer } from './local-server.js';

/** What the register holds under one organization number. */
export interface LocalUnit {
  name: string;
  /** A sub-unit (`underenhet`, BEDR): found under `/underenheter/`, not `/enheter/`. */
  subUnit?: boolean;
  /** Deleted on this day (`slettedato`): answered 200 with the deleted unit's few fields, as the register does. */
  deletedOn?: string;
  /** Removed (`fjernet`): answered 410 Gone. */
  removed?: boolean;
}

export interface LocalNationalRegister extends LocalServer {
  /** The API's base, as NATIONAL_REGISTER_URL takes it: `{url}/enhetsregisteret/api`. */
  apiUrl: string;
  /** The units it knows, by organization number; a number not here is unknown (404). */
  units: Map<string, LocalUnit>;
  /** The unit lookups it was asked (`enheter/{n}` or `underenheter/{n}`), in order. */
  asked: string[];
  /** From now on, misbehave for this organization number only (`none` ends it), as `Failure` says. */
  failFor(number: string, failure: Failure | 'none'): void;
}

const API = '/enhetsregisteret/api/';
const CONTROL = '/control/';
const JSON_TYPE = 'application/json;charset=UTF-8';

const selfLink = (kind: string, number: string) => ({
  self: { href: `https://data.brreg.no/enhetsregisteret/api/${kind}/${number}` },
});

/** A unit as the register's open API answers it (200), with the fields its documentation names; fictitious values. */
function unitJson(kind: 'enheter' | 'underenheter', number: string, unit: LocalUnit): object {
  const form = unit.subUnit
    ? { kode: 'BEDR', beskrivelse: 'Underenhet til næringsdrivende og offentlig forvaltning' }
    : { kode: 'AS', beskrivelse: 'Aksjeselskap' };
  const organisasjonsform = {
    ...form,
    _links: { self: { href: `https://data.brreg.no/enhetsregisteret/api/organisasjonsformer/${form.kode}` } },
  };
  if (unit.deletedOn)
    return {
      organisasjonsnummer: number,
      navn: unit.name,
      organisasjonsform,
      slettedato: unit.deletedOn,
      _links: selfLink(kind, number),
    };
  return {
    organisasjonsnummer: number,
    navn: unit.name,
    organisasjonsform,
    registreringsdatoEnhetsregisteret: '2020-01-15',
    registrertIMvaregisteret: true,
    naeringskode1: { kode: '62.010', beskrivelse: 'Programmeringstjenester' },
    antallAnsatte: 12,
    forretningsadresse: {
      land: 'Norge',
      landkode: 'NO',
      postnummer: '0150',
      poststed: 'OSLO',
      adresse: ['Testveien 1'],
      kommune: 'OSLO',
      kommunenummer: '0301',
    },
    ...(unit.subUnit
      ? {}
      : {
          stiftelsesdato: '2020-01-01',
          institusjonellSektorkode: { kode: '2100', beskrivelse: 'Private aksjeselskaper mv.' },
          registrertIForetaksregisteret: true,
          registrertIStiftelsesregisteret: false,
          registrertIFrivillighetsregisteret: false,
          konkurs: false,
          underAvvikling: false,
          underTvangsavviklingEllerTvangsopplosning: false,
          maalform: 'Bokmål',
        }),
    _links: selfLink(kind, number),
  };
}

/** The register's error answer (Spring's shape). */
function errorJson(response: http.ServerResponse, status: number, error: string, message: string, path: string): void {
  response
    .writeHead(status, { 'content-type': JSON_TYPE })
    .end(JSON.stringify({ timestamp: new Date().toISOString(), status, error, message, path }));
}

/**
 * A small Enhetsregisteret for development and tests: `GET /enhetsregisteret/api/enheter/{orgnr}` and
 * `/underenheter/{orgnr}` as the register's open API answers them: 200 with the unit (a deleted one with its
 * `slettedato`), 404 for a number it has no unit of, 410 for a removed one, 400 for what is not nine digits; with
 * failures switchable for all (`fail`, `delay`) or per number (`failFor`). Run alone with
 * `tsx dev/local-national-register.ts [port]`; then `PUT /control/{orgnr}` with a unit's JSON (`{"name": …,
 * "deletedOn"?, "removed"?, "subUnit"?}`, or `{"failure": "timeout"}`) sets what it answers, `DELETE /control/{orgnr}`
 * forgets it.
 */
export async function startLocalNationalRegister(port = 0): Promise<LocalNationalRegister> {
  const units = new Map<string, LocalUnit>();
  const asked: string[] = [];
  const failing = new Map<string, Failure>();
  const server = await startLocalServer(
    port,
    (request, body, response, misbehave) => {
      const path = (request.url ?? '').split('?')[0] ?? '';
      if (path.startsWith(CONTROL))
        return control(decodeURIComponent(path.slice(CONTROL.length)), request.method, body, response);
      const [kind, number, ...rest] = path.startsWith(API) ? path.slice(API.length).split('/') : [];
      if (
        request.method !== 'GET' ||
        (kind !== 'enheter' && kind !== 'underenheter') ||
        number === undefined ||
        rest.length > 0
      ) {
        return errorJson(response, 404, 'Not Found', 'No static resource', path);
      }
      asked.push(`${kind}/${number}`);
      const failure = failing.get(number);
      if (failure) return misbehave(failure);
      if (!/^\d{9}$/.test(number))
        return errorJson(response, 400, 'Bad Request', `Ugyldig organisasjonsnummer: ${number}`, path);
      const unit = units.get(number);
      if (!unit || (unit.subUnit === true) !== (kind === 'underenheter')) {
        return errorJson(
          response,
          404,
          'Not Found',
          `Ingen ${kind === 'enheter' ? 'enhet' : 'underenhet'} med organisasjonsnummer ${number} ble funnet`,
          path,
        );
      }
      if (unit.removed)
        return errorJson(response, 410, 'Gone', `Enhet med organisasjonsnummer ${number} er fjernet`, path);
      response.writeHead(200, { 'content-type': JSON_TYPE }).end(JSON.stringify(unitJson(kind, number, unit)));
    },
    (response) =>
      errorJson(response, 500, 'Internal Server Error', 'failing (local Enhetsregisteret failure mode)', ''),
  );

  const control = (number: string, method: string | undefined, body: string, response: http.ServerResponse) => {
    if (method === 'DELETE') {
      units.delete(number);
      failing.delete(number);
      return void response.writeHead(204).end();
    }
    try {
      const { failure, ...unit } = JSON.parse(body) as LocalUnit & { failure?: Failure | 'none' };
      if (failure) register.failFor(number, failure);
      if (typeof unit.name === 'string') units.set(number, unit);
      response.writeHead(204).end();
    } catch {
      response.writeHead(400).end('a unit as JSON: {"name": ..., "deletedOn"?, "removed"?, "subUnit"?, "failure"?}');
    }
  };
  const register: LocalNationalRegister = {
    ...server,
    apiUrl: `${server.url}/enhetsregisteret/api`,
    units,
    asked,
    failFor(number, failure) {
      if (failure === 'none') failing.delete(number);
      else failing.set(number, failure);
    },
  };
  return register;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const register = await startLocalNationalRegister(Number(process.argv[2] ?? 8093));
  register.units.set('921000049', { name: 'EKSEMPEL BAKERI AS' });
  register.units.set('974760673', { name: 'REGISTERENHETEN I BRØNNØYSUND' });
  register.units.set('910000004', { name: 'SLETTET EKSEMPEL AS', deletedOn: '2024-06-01' });
  console.log(
    `local Enhetsregisteret at ${register.apiUrl} (NATIONAL_REGISTER_URL=${register.apiUrl}); ` +
      'it knows 921000049 and 974760673, and has deleted 910000004',
  );
}

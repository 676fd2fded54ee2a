import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SIGNING_THREAD_IDLE_MS } from '../src/smp/signing-pool.js';
import type { DeliveryRun } from './delivery.js';
import type { ImportRun } from './import.js';
import type { Measurement } from './measure.js';
import type { DatabaseKind } from './stores.js';

export interface Result {
  id: string;
  title: string;
  /** What `perSecond` counts: requests, added participants, or streamed rows. */
  unit: string;
  service: Measurement;
  http: Measurement;
  /** The least database work that answers the request (bench/minimal.ts), run by pgbench; none on the embedded database. */
  database?: Measurement;
  /** With `--replay`: pgbench replaying the statements the service sends for the request. */
  serviceSql?: Measurement;
  /** The lower of the two ceilings and the service's throughput over it; only where both exist. */
  lowerCeiling?: 'http' | 'database';
  ratio?: number;
  /** Service throughput over the HTTP ceiling. */
  httpRatio: number;
  connections?: number;
  minimalSql?: string;
  responseBytes?: number[];
  memory?: { restMiB: number; peakMiB: number; growthMiB: number };
  sql?: string;
}

/** One data set: built once, measured by every configuration on its database. */
export interface DatasetReport {
  database: DatabaseKind;
  participants: number;
  server: string;
  settings?: Record<string, string>;
  buildSeconds: number;
  steps: Record<string, number>;
  /** `registry import-participants` on a generated file (bench/import.ts), after the data set's configurations. */
  imported?: ImportRun;
  /** The delivery scenario (bench/delivery.ts): new organizations reaching a local SML and Directory at a network's pace. */
  delivery?: DeliveryRun;
}

/** The service on one database with one REGISTRY_WORKERS value. */
export interface ConfigurationReport {
  /** `postgres ×2`: database and REGISTRY_WORKERS. */
  label: string;
  database: DatabaseKind;
  workers: number;
  participants: number;
  memory: { restAtStartMiB: number; restAtEndMiB: number; restAfterIdleMiB: number };
  results: Result[];
  /** `--standby`: the standby routes read from a streaming hot standby; the queries it answered. */
  standby?: { reads: number };
}

export interface Report {
  command: string;
  date: string;
  label?: string;
  machine: { cpus: number; node: string };
  duration: number;
  connections: number;
  datasets: DatasetReport[];
  configurations: ConfigurationReport[];
  /** What was not measured, and why. */
  skipped: string[];
  totalSeconds: number;
}

const number = (value: number | undefined) =>
  value !== undefined && Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '-';
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(value < 10 ? 2 : 1) : '-');
const percent = (ratio: number | undefined) => (ratio === undefined ? '-' : `${(ratio * 100).toFixed(0)} %`);
const count = (value: number) => value.toLocaleString('en-US');

const HEADER = [
  '#',
  'scenario',
  'configuration',
  'clients',
  'unit/s',
  'p50 ms',
  'p99 ms',
  'errors',
  'HTTP ceiling/s',
  'DB least work/s',
  'service SQL/s',
  'lower',
  'of lower',
  'of HTTP',
];
/** Left-aligned columns: the scenario's title and the configuration. */
const TEXT_COLUMNS = new Set([1, 2]);

function row(r: Result, configuration: ConfigurationReport, report: Report, first: boolean): string[] {
  return [
    first ? r.id : '',
    first ? r.title : '',
    configuration.label,
    String(r.connections ?? (r.id === '8' ? 1 : report.connections)),
    number(r.service.perSecond),
    ms(r.service.p50),
    ms(r.service.p99),
    String(r.service.errors),
    number(r.http.perSecond),
    number(r.database?.perSecond),
    number(r.serviceSql?.perSecond),
    r.lowerCeiling ?? '-',
    percent(r.ratio),
    percent(r.httpRatio),
  ];
}

const CPU_HEADER = [
  '#',
  'configuration',
  'service',
  'PostgreSQL',
  'load',
  'machine',
  'bare server',
  'its load',
  'its machine',
];

/** Microseconds of CPU per unit (bench/cpu.ts): the service's side, then the bare HTTP server's. */
function cpuRow(r: Result, configuration: ConfigurationReport, _report: Report, first: boolean): string[] | undefined {
  const {
    service: { cpu: ours },
    http: { cpu: bare },
  } = r;
  if (!ours) return undefined;
  return [
    first ? r.id : '',
    configuration.label,
    number(ours.server),
    number(ours.database),
    number(ours.load),
    number(ours.machine),
    number(bare?.server),
    number(bare?.load),
    number(bare?.machine),
  ];
}

/** One row per scenario and configuration, the configurations of a scenario one under the other. */
function rows(
  report: Report,
  rowOf: (r: Result, configuration: ConfigurationReport, report: Report, first: boolean) => string[] | undefined = row,
): string[][] {
  const ids = [...new Set(report.configurations.flatMap((c) => c.results.map((r) => r.id)))];
  return ids.flatMap((id) =>
    report.configurations
      .flatMap((configuration) => configuration.results.filter((r) => r.id === id).map((r) => ({ r, configuration })))
      .map(({ r, configuration }, index) => rowOf(r, configuration, report, index === 0))
      .filter((cells): cells is string[] => cells !== undefined),
  );
}

const CPU_NOTE =
  'CPU per unit, µs (bench/cpu.ts): what the service (with its workers), the PostgreSQL processes, the load generator and ' +
  'the whole machine spent per request (or added participant) while the service was measured, and the same for the bare HTTP server.';

function datasetNotes(dataset: DatasetReport): string[] {
  const imported = dataset.imported;
  return [
    `${dataset.database}: ${count(dataset.participants)} participants built in ${dataset.buildSeconds.toFixed(1)} s; ${dataset.server}${
      dataset.settings
        ? `; ${Object.entries(dataset.settings)
            .map(([name, value]) => `${name}=${value}`)
            .join(', ')}`
        : ''
    }.`,
    ...(imported
      ? [
          `${dataset.database}: import (\`registry import-participants\`, ${count(imported.lines)} lines, the service stopped): ${imported.exitCode === 0 ? '' : `FAILED (exit ${imported.exitCode}) after `}${imported.seconds.toFixed(1)} s, ${number(imported.rowsPerSecond)} rows/s, peak resident memory ${imported.peakMiB.toFixed(0)} MiB.`,
        ]
      : []),
    ...(dataset.delivery ? [deliveryNote(dataset.database, dataset.delivery)] : []),
  ];
}

function deliveryNote(database: string, run: DeliveryRun): string {
  return (
    `${database}: delivery (${count(run.organizations)} new organizations imported in ${run.importSeconds.toFixed(1)} s; stand-ins at ` +
    `${run.latencyMs} ms, ${run.maxInFlight} calls at once; SML_CALLS_AT_ONCE=${run.callsAtOnce.sml}, DIRECTORY_CALLS_AT_ONCE=${run.callsAtOnce.directory}, SML_LIST_SIZE=${run.listSize}): ` +
    `${run.complete ? '' : 'INCOMPLETE: '}SML ${number(run.smlPerSecond)} organizations/s, all in after ${run.smlSeconds.toFixed(1)} s; ` +
    `Directory ${number(run.directoryPerSecond)} organizations/s, all in after ${run.directorySeconds.toFixed(1)} s; ` +
    `${run.trickle.count} single registrations meanwhile, commit to SML p50 ${ms(run.trickle.p50Ms)} ms, p99 ${ms(run.trickle.p99Ms)} ms, max ${ms(run.trickle.maxMs)} ms; ` +
    `the stand-ins' ceiling at as many calls at once: ${number(run.ceiling.smlListCallsPerSecond)} CreateLists/s ` +
    `(${number(run.ceiling.smlOrganizationsPerSecond)} organizations/s), ${number(run.ceiling.directoryCallsPerSecond)} Directory calls/s.`
  );
}

function configurationNote(configuration: ConfigurationReport): string {
  const stream = configuration.results.find((r) => r.memory)?.memory;
  return (
    `${configuration.label}: ${count(configuration.participants)} participants, REGISTRY_WORKERS=${configuration.workers}; service resident memory at rest ` +
    `${configuration.memory.restAtStartMiB.toFixed(0)} MiB after start, ${configuration.memory.restAtEndMiB.toFixed(0)} MiB after the run, ` +
    `${configuration.memory.restAfterIdleMiB.toFixed(0)} MiB once idle (the signing threads end after ${SIGNING_THREAD_IDLE_MS / 1000} s without work)` +
    `${stream ? `; stream: ${stream.restMiB.toFixed(0)} MiB before, peak ${stream.peakMiB.toFixed(0)} MiB (growth ${stream.growthMiB.toFixed(0)} MiB)` : ''}` +
    `${configuration.workers > 1 ? ' (the primary process only)' : ''}.`
  );
}

/**
 * Each configuration with a standby beside the same one without: its rate per scenario as a share of the other's, so a
 * read served by the standby can be seen to cost no more than one served by the primary.
 */
function standbyNotes(report: Report): string[] {
  return report.configurations.flatMap((withStandby) => {
    const alone =
      withStandby.standby &&
      report.configurations.find(
        (c) => !c.standby && c.database === withStandby.database && c.workers === withStandby.workers,
      );
    if (!alone || !withStandby.standby) return [];
    const shares = withStandby.results.flatMap((r) => {
      const other = alone.results.find((o) => o.id === r.id);
      return other ? [`${r.id} ${percent(r.service.perSecond / other.service.perSecond)}`] : [];
    });
    return [
      `${withStandby.label} against ${alone.label} (rate with the standby as a share of the rate without; the standby answered ` +
        `${count(withStandby.standby.reads)} queries of the standby routes: SMP lookups, catalogue, organization processes, participant finds and the stream, ` +
        `audit and feed): ${shares.join(', ')}.`,
    ];
  });
}

function notes(report: Report): string[] {
  return [
    ...report.datasets.flatMap(datasetNotes),
    ...report.configurations.map(configurationNote),
    ...standbyNotes(report),
    'Ceilings are measured once per data set, with its first configuration; the rows of its other configurations repeat them.',
    ...(report.datasets.some((d) => d.database === 'embedded')
      ? ['The embedded database has no pgbench ceiling (-): its rows compare with the HTTP ceiling only.']
      : []),
    ...report.skipped,
  ];
}

function printAligned(header: string[], body: string[][], textColumns: Set<number>): void {
  const table = [header, ...body];
  const widths = header.map((_, column) => Math.max(...table.map((cells) => (cells[column] ?? '').length)));
  console.log();
  for (const cells of table)
    console.log(
      cells
        .map((cell, column) =>
          textColumns.has(column) ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0),
        )
        .join('  '),
    );
  console.log();
}

export function printTable(report: Report): void {
  printAligned(HEADER, rows(report), TEXT_COLUMNS);
  for (const note of notes(report)) console.log(note);
  const cpu = rows(report, cpuRow);
  if (cpu.length === 0) return;
  printAligned(CPU_HEADER, cpu, new Set([1]));
  console.log(CPU_NOTE);
}

function markdown(report: Report): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const sizes = report.datasets.map((d) => `${d.database} ${count(d.participants)} participants`).join(', ');
  return [
    `# Benchmark ${report.date}`,
    '',
    `\`${report.command}\` (${sizes}; ${report.duration} s per scenario, ${report.connections} connections)`,
    '',
    line(HEADER),
    line(HEADER.map((_, column) => (TEXT_COLUMNS.has(column) ? '---' : '---:'))),
    ...rows(report).map(line),
    '',
    ...notes(report).map((note) => `- ${note}`),
    '',
    ...markdownCpu(report, line),
  ].join('\n');
}

function markdownCpu(report: Report, line: (cells: string[]) => string): string[] {
  const cpu = rows(report, cpuRow);
  if (cpu.length === 0) return [];
  return [
    CPU_NOTE,
    '',
    line(CPU_HEADER),
    line(CPU_HEADER.map((_, column) => (column === 1 ? '---' : '---:'))),
    ...cpu.map(line),
    '',
  ];
}

/** `<stamp>-<participants of each data set>.json` and `.md` in `dir`. */
export function writeResults(report: Report, dir: string, stamp: string): string[] {
  const base = join(dir, `${stamp}-${report.datasets.map((d) => d.participants).join('-')}`);
  writeFileSync(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(`${base}.md`, markdown(report));
  return [`${base}.json`, `${base}.md`];
}

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ImportRun } from './import.js';
import type { Measurement } from './measure.js';

export interface Result {
  id: string;
  title: string;
  /** What `perSecond` counts: requests, added participants, or streamed rows. */
  unit: string;
  service: Measurement;
  http: Measurement;
  /** The least database work that answers the request (bench/minimal.ts), run by pgbench. */
  database: Measurement;
  /** With `--replay`: pgbench replaying the statements the service sends for the request. */
  serviceSql?: Measurement;
  lowerCeiling: 'http' | 'database';
  /** Service throughput over the lower ceiling, and over the HTTP ceiling. */
  ratio: number;
  httpRatio: number;
  connections?: number;
  minimalSql?: string;
  responseBytes?: number[];
  memory?: { restMiB: number; peakMiB: number; growthMiB: number };
  sql?: string;
}

export interface Report {
  command: string;
  date: string;
  participants: number;
  duration: number;
  connections: number;
  /** REGISTRY_WORKERS of the service. */
  workers: number;
  /** `registry import-participants` on a generated file (bench/import.ts). */
  imported?: ImportRun;
  database: { server: string; settings?: Record<string, string> };
  dataset: { buildSeconds: number; steps: Record<string, number> };
  memory: { restAtStartMiB: number; restAtEndMiB: number };
  results: Result[];
}

const number = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '-');
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(value < 10 ? 2 : 1) : '-');

const HEADER = ['#', 'scenario', 'clients', 'unit/s', 'p50 ms', 'p99 ms', 'errors', 'HTTP ceiling/s', 'DB least work/s', 'service SQL/s', 'lower', 'of lower', 'of HTTP'];
const percent = (ratio: number) => `${(ratio * 100).toFixed(0)} %`;

function rows(report: Report): string[][] {
  return report.results.map((r) => [
    r.id, r.title, String(r.connections ?? (r.id === '8' ? 1 : report.connections)), number(r.service.perSecond), ms(r.service.p50),
    ms(r.service.p99), String(r.service.errors), number(r.http.perSecond), number(r.database.perSecond),
    r.serviceSql ? number(r.serviceSql.perSecond) : '-', r.lowerCeiling, percent(r.ratio), percent(r.httpRatio),
  ]);
}

function notes(report: Report): string[] {
  const stream = report.results.find((r) => r.memory);
  return [
    `Service processes (REGISTRY_WORKERS): ${report.workers}${report.workers > 1 ? '; resident memory below is the primary\'s only' : ''}.`,
    `Data set: ${report.participants.toLocaleString('en-US')} participants built in ${report.dataset.buildSeconds.toFixed(1)} s.`,
    `Database: ${report.database.server}${report.database.settings ? `; ${Object.entries(report.database.settings).map(([name, value]) => `${name}=${value}`).join(', ')}` : ''}.`,
    `Service resident memory at rest: ${report.memory.restAtStartMiB.toFixed(0)} MiB after start, ${report.memory.restAtEndMiB.toFixed(0)} MiB after the run.`,
    ...(report.imported ? [`Import (\`registry import-participants\`, ${report.imported.lines.toLocaleString('en-US')} lines): ${report.imported.exitCode === 0 ? '' : `FAILED (exit ${report.imported.exitCode}) after `}${report.imported.seconds.toFixed(1)} s, ${number(report.imported.rowsPerSecond)} rows/s, peak resident memory ${report.imported.peakMiB.toFixed(0)} MiB.`] : []),
    ...(stream?.memory ? [`Stream: resident memory ${stream.memory.restMiB.toFixed(0)} MiB before, peak ${stream.memory.peakMiB.toFixed(0)} MiB (growth ${stream.memory.growthMiB.toFixed(0)} MiB).`] : []),
  ];
}

export function printTable(report: Report): void {
  const table = [HEADER, ...rows(report)];
  const widths = HEADER.map((_, column) => Math.max(...table.map((row) => (row[column] ?? '').length)));
  console.log();
  for (const row of table) console.log(row.map((cell, column) => (column === 1 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join('  '));
  console.log();
  for (const note of notes(report)) console.log(note);
}

function markdown(report: Report): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [
    `# Benchmark ${report.date}`,
    '',
    `\`${report.command}\` (${report.participants.toLocaleString('en-US')} participants, ${report.duration} s per scenario, ${report.connections} connections)`,
    '',
    line(HEADER),
    line(HEADER.map((_, column) => (column === 1 ? '---' : '---:'))),
    ...rows(report).map(line),
    '',
    ...notes(report).map((note) => `- ${note}`),
    '',
  ].join('\n');
}

/** `<stamp>-<participants>.json` and `.md` in `dir`. */
export function writeResults(report: Report, dir: string, stamp: string): string[] {
  const base = join(dir, `${stamp}-${report.participants}`);
  writeFileSync(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(`${base}.md`, markdown(report));
  return [`${base}.json`, `${base}.md`];
}

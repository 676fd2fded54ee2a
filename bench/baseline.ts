import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Report } from './report.js';

/**
 * The one run kept in the repository: per scenario and configuration, its rate and its share of the same run's HTTP
 * ceiling. The share is what compares across machines and minutes (both halves ran in the same minute on the same
 * cores); the rate is shown beside it for a person who knows the machine.
 */
export interface Baseline {
  command: string;
  date: string;
  participants: number[];
  scenarios: BaselineScenario[];
}

interface BaselineScenario {
  configuration: string;
  id: string;
  perSecond: number;
  p99: number;
  httpRatio: number;
}

export function baselineOf(report: Report): Baseline {
  return {
    command: report.command,
    date: report.date,
    participants: report.datasets.map((dataset) => dataset.participants),
    scenarios: report.configurations.flatMap((configuration) =>
      configuration.results.map((result) => ({
        configuration: configuration.label,
        id: result.id,
        perSecond: Math.round(result.service.perSecond),
        p99: result.service.p99,
        httpRatio: Number(result.httpRatio.toFixed(3)),
      })),
    ),
  };
}

export function writeBaseline(report: Report, path: string): void {
  writeFileSync(path, `${JSON.stringify(baselineOf(report), null, 2)}\n`);
}

const percent = (ratio: number) => `${(ratio * 100).toFixed(0)} %`;

/**
 * Each scenario of this run beside the baseline's, when the baseline measured the same data set sizes (a share of the
 * ceiling at 5,000 participants says nothing of one at 1,000,000); the lines to print, none without a comparable baseline.
 */
export function comparedWithBaseline(report: Report, path: string): string[] {
  if (!existsSync(path)) return [];
  const baseline = JSON.parse(readFileSync(path, 'utf8')) as Baseline;
  const now = baselineOf(report);
  if (baseline.participants.join() !== now.participants.join()) {
    return [
      `baseline ${path}: measured at ${baseline.participants.join(', ')} participants, this run at ${now.participants.join(', ')}: not compared`,
    ];
  }
  const lines = now.scenarios.flatMap((scenario) => {
    const then = baseline.scenarios.find(
      (entry) => entry.id === scenario.id && entry.configuration === scenario.configuration,
    );
    if (!then) return [];
    const change = scenario.httpRatio / then.httpRatio - 1;
    return [
      `${scenario.id.padEnd(6)} ${scenario.configuration.padEnd(22)} share of the HTTP ceiling ${percent(then.httpRatio)} → ${percent(scenario.httpRatio)} ` +
        `(${change >= 0 ? '+' : ''}${(change * 100).toFixed(0)} %), ${then.perSecond}/s → ${scenario.perSecond}/s`,
    ];
  });
  return [`against the baseline ${path} (${baseline.date}):`, ...lines];
}

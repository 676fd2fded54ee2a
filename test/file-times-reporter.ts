import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * After the run, each test file's time on each database (import, hooks and tests), slowest first, and the wall
 * time of the whole run: where the suite's minutes go stays in front of whoever runs it.
 */
export default class FileTimesReporter implements Reporter {
  private started = performance.now();

  onTestRunStart(): void {
    this.started = performance.now();
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const rows = modules
      .map((module) => ({
        name: `${module.project.name.padEnd(8)} ${relative(process.cwd(), module.moduleId)}`,
        ms: fileTime(module),
      }))
      .sort((a, b) => b.ms - a.ms);
    const total = rows.reduce((sum, row) => sum + row.ms, 0);
    const lines = rows.map((row) => `${seconds(row.ms).padStart(7)}  ${row.name}`);
    process.stdout.write(
      `\nTime per test file, slowest first (${rows.length} file runs):\n${lines.join('\n')}\n` +
        `${seconds(total).padStart(7)}  all files together; ${seconds(performance.now() - this.started)} wall time\n\n`,
    );
  }
}

function fileTime(module: TestModule): number {
  const diagnostic = module.diagnostic();
  return diagnostic.collectDuration + diagnostic.setupDuration + diagnostic.duration;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

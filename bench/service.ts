import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';

/** A port the system has just handed out as free (a random pick may be taken by an outgoing connection). */
export { freePort } from '../dev/local-cluster.js';

/** A child process listening on a port, with its resident memory readable from /proc. */
export interface RunningProcess {
  pid: number;
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Resident memory of `pid` in MiB (VmRSS of /proc/<pid>/status). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return kib / 1024;
}

/** Samples `pid`'s resident memory every `everyMs` until `stop()`, which returns the peak. */
export function sampleRss(pid: number, everyMs = 20): { stop(): number } {
  let peak = rssMiB(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssMiB(pid));
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, rssMiB(pid));
    },
  };
}

async function waitForHttp(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${child.spawnargs.join(' ')} exited with ${child.exitCode}`);
    try {
      await fetch(url);
      return;
    } catch {
      await sleep(100);
    }
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** Starts `node args` with `env`, output to `logFile`, and waits until `probePath` answers. */
export async function startProcess(
  args: string[],
  env: NodeJS.ProcessEnv,
  port: number,
  logFile: string,
  probePath = '/',
): Promise<RunningProcess> {
  const log = openSync(logFile, 'a');
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', log, log] });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}${probePath}`, child, 30_000);
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return { pid: child.pid as number, url, child, stop: () => stopChild(child) };
}

/** Whether the process ended on its own (a crash) rather than by `stop()`. */
export function crashed(running: RunningProcess): boolean {
  return running.child.exitCode !== null && running.child.exitCode !== 0;
}

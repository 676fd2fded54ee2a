/**
 * Where the machine's CPU went while a side was measured: the server under load (with its worker processes), the
 * PostgreSQL processes (a process that ended meanwhile is not counted), the load generator (this process) and the whole machine, read from /proc (Linux). On two
 * cores shared by all of them, a rate says how fast the machine was that hour; CPU per request says what each part
 * costs, and the bare server's beside it is the floor.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Microseconds of CPU per unit (request, added participant) of each part. */
export interface CpuPerUnit {
  server: number;
  database: number;
  load: number;
  machine: number;
}

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

interface ProcessTicks {
  parent: number;
  command: string;
  ticks: number;
}

/** Every process's parent, command and user plus system ticks; one that ends while being read is left out. */
function processes(): Map<number, ProcessTicks> {
  const found = new Map<number, ProcessTicks>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const fields = stat.slice(close + 2).split(' ');
      found.set(Number(entry), {
        parent: Number(fields[1]),
        command: stat.slice(stat.indexOf('(') + 1, close),
        ticks: Number(fields[11]) + Number(fields[12]),
      });
    } catch {
      // It ended between the listing and the read.
    }
  }
  return found;
}

/** Busy ticks of the whole machine (every state but idle and waiting for I/O). */
function machineTicks(): number {
  const [, ...counters] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] as string).trim().split(/\s+/).map(Number);
  return counters.slice(0, 8).reduce((sum, value, index) => (index === 3 || index === 4 ? sum : sum + value), 0);
}

function isWithin(pid: number, root: number, all: Map<number, ProcessTicks>): boolean {
  for (
    let current: number | undefined = pid;
    current !== undefined && current > 1;
    current = all.get(current)?.parent
  ) {
    if (current === root) return true;
  }
  return false;
}

/** Ticks spent between two readings by the server (and its descendants) and by PostgreSQL's processes. */
function ticksBetween(before: Map<number, ProcessTicks>, after: Map<number, ProcessTicks>, serverPid: number) {
  let server = 0;
  let database = 0;
  for (const [pid, entry] of after) {
    const spent = entry.ticks - (before.get(pid)?.ticks ?? 0);
    if (isWithin(pid, serverPid, after)) server += spent;
    else if (entry.command === 'postgres') database += spent;
  }
  return { server, database };
}

/** Runs `work` (which measures `units` of something) and says what each part's CPU cost per unit. */
export async function cpuDuring<T>(
  serverPid: number,
  work: () => Promise<T>,
  unitsOf: (result: T) => number,
): Promise<{ result: T; cpu: CpuPerUnit }> {
  const before = { processes: processes(), machine: machineTicks(), load: process.cpuUsage() };
  const result = await work();
  const after = { processes: processes(), machine: machineTicks() };
  const load = process.cpuUsage(before.load);
  const { server, database } = ticksBetween(before.processes, after.processes, serverPid);
  const units = Math.max(1, unitsOf(result));
  const perUnit = (ticks: number) => ((ticks / TICKS_PER_SECOND) * 1e6) / units;
  return {
    result,
    cpu: {
      server: perUnit(server),
      database: perUnit(database),
      load: (load.user + load.system) / units,
      machine: perUnit(after.machine - before.machine),
    },
  };
}

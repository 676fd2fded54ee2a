import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { once } from 'node:events';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { testDatabaseKind } from '../helpers/database.js';

/** Runs `npx tsx dev/local-cluster.ts ...args` in a process group of its own (as a terminal runs it) until it has printed its settings. */
async function startLocalCluster(args: string[]) {
  const child = spawn('npx', ['tsx', 'dev/local-cluster.ts', ...args], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = once(child, 'exit');
  for (let waited = 0; !output.includes('Ctrl-C stops'); waited += 100) {
    if (waited > 60_000 || child.exitCode !== null) throw new Error(`dev/local-cluster.ts did not start: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const setting = (name: string) => new RegExp(`^${name}=(.*)$`, 'm').exec(output)?.[1] ?? '';
  return { output, setting, exited, interrupt: () => process.kill(-(child.pid as number), 'SIGINT') };
}

async function sql(connectionString: string, statement: string) {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return (await client.query(statement)).rows;
  } finally {
    await client.end();
  }
}

describe.runIf(testDatabaseKind === 'postgres')(
  'dev/local-cluster.ts: a deployment with synchronous standbys to try on one machine',
  () => {
    it('prints the multi-host DATABASE_URL a failover needs, names its standbys for synchronous replication, and Ctrl-C removes all of it', async () => {
      const cluster = await startLocalCluster(['2', '--synchronous']);
      const directories = [...cluster.output.matchAll(/ in (\/\S+?)(?:,|$)/gm)].map((match) => match[1] as string);
      try {
        const url = cluster.setting('DATABASE_URL');
        expect(url).toMatch(
          /^postgres:\/\/postgres@127\.0\.0\.1:\d+,127\.0\.0\.1:\d+,127\.0\.0\.1:\d+\/registry\?target_session_attrs=read-write$/,
        );
        expect(cluster.setting('DATABASE_READ_URLS').split(',')).toHaveLength(2);
        // The first host is the primary (node-postgres itself takes one host; the service tries each in turn).
        const primary = url.replace(/@([^,]+),[^/]+/, '@$1');
        const replication = await sql(
          primary,
          'SELECT application_name, sync_state FROM pg_stat_replication ORDER BY application_name',
        );
        expect(replication).toEqual([
          { application_name: 'standby_1', sync_state: 'quorum' },
          { application_name: 'standby_2', sync_state: 'quorum' },
        ]);
        expect(directories).toHaveLength(3);
      } finally {
        cluster.interrupt();
        await cluster.exited;
      }
      expect(directories.filter((directory) => existsSync(directory))).toEqual([]);
    }, 120_000);
  },
);

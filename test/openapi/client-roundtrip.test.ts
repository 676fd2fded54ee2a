import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { testDatabaseKind } from '../helpers/database.js';
import { PROJECT_ROOT, testOutputDir } from '../helpers/openapi-tools.js';

const run = promisify(execFile);

interface Operation {
  tags?: string[];
  parameters?: Array<{ name: string; in: string }>;
  'x-roles'?: string[];
  /** The 405 of a method the path does not take. */
  'x-method-not-allowed'?: boolean;
}
type Description = { paths: Record<string, Record<string, Operation>> };

/** The roles the client tries, in order, with the test user that has it. */
const CALLERS = ['ADMIN', 'SERVICE_PROVIDER', 'ACCESS_POINT_PROVIDER', 'REGISTRY_AUTHORITY', 'ANONYMOUS'] as const;

/** One typed GET per resource: its find operation, else its first read with sample path values. */
function resourceCalls(description: Description): string[] {
  const calls = new Map<string, string>();
  const gets = Object.entries(description.paths)
    .flatMap(([path, item]) => (item.get && !item.get['x-method-not-allowed'] ? [{ path, operation: item.get }] : []))
    .sort((a, b) => Number(a.path.includes('{')) - Number(b.path.includes('{')));
  for (const { path, operation } of gets) {
    const tag = operation.tags?.[0];
    if (!tag || calls.has(tag)) continue;
    const role = CALLERS.find((caller) => operation['x-roles']?.includes(caller)) ?? 'ANONYMOUS';
    const pathValues = (operation.parameters ?? [])
      .filter((parameter) => parameter.in === 'path')
      .map(
        (parameter) =>
          `${parameter.name}: ${parameter.name === 'identifier' ? "'00000000-0000-4000-8000-000000000000'" : "'iso6523-actorid-upis::0192:987654325'"}`,
      );
    const params = [
      ...(operation.parameters?.some((parameter) => parameter.name === 'size') ? ['query: { size: 5 }'] : []),
      ...(pathValues.length > 0 ? [`path: { ${pathValues.join(', ')} }`] : []),
    ];
    calls.set(
      tag,
      `  calls.push({ resource: '${tag}', role: '${role}', response: (await client.GET('${path}', { params: { ${params.join(', ')} }, headers: headersOf('${role}') })).response });`,
    );
  }
  return [...calls.values()];
}

/** The client code: hand-written typed calls on processes, then one generated call per resource. */
function clientSource(description: Description): string {
  return `import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

type Process = components['schemas']['Process'];

export async function roundTrip(baseUrl: string, authorizations: Record<string, string>) {
  const client = createClient<paths>({ baseUrl });
  const headersOf = (role: string) => (role === 'ANONYMOUS' ? {} : { authorization: authorizations[role] });
  const added = await client.POST('/rest/api/processes', {
    headers: headersOf('ADMIN'),
    body: {
      domain: 'client', title: 'Generated client', qualifiedIdentifier: 'cenbii-procid-ubl::urn:client:roundtrip',
      restricted: false, visible: true, capabilities: [], documentTypes: [], dependencies: [], requiredICDs: ['0192'],
    },
  });
  if (!added.data) throw new Error('add process: ' + added.response.status + ' ' + JSON.stringify(added.error));
  const got = await client.GET('/rest/api/processes/{identifier}', { params: { path: { identifier: added.data.identifier } } });
  const process: Process | undefined = got.data;
  const qualifiedIdentifier: string | undefined = process?.qualifiedIdentifier;
  // @ts-expect-error the generated type knows the properties of a process
  void process?.notAProperty;
  const missing = await client.GET('/rest/api/processes/{identifier}', { params: { path: { identifier: '00000000-0000-4000-8000-000000000000' } } });
  const message: string | undefined = missing.error?.message;

  const calls: Array<{ resource: string; role: string; response: Response }> = [];
${resourceCalls(description).join('\n')}
  return {
    added: { status: added.response.status, contentType: added.response.headers.get('content-type') },
    got: { status: got.response.status, qualifiedIdentifier, requiredICDs: process?.requiredICDs },
    missing: { status: missing.response.status, message },
    calls: calls.map((call) => ({ resource: call.resource, role: call.role, status: call.response.status })),
  };
}
`;
}

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noEmit: true,
    skipLibCheck: false,
    types: [],
    lib: ['ES2022', 'DOM'],
  },
  include: ['*.ts'],
};

describe('a client generated from the description', () => {
  const test = useTestApp({ listen: true });
  let dir: string;
  let description: Description;

  beforeAll(async () => {
    description = (await test.app.inject({ url: '/v3/api-docs' })).json();
    dir = testOutputDir(`client-${testDatabaseKind}`);
  });

  it('is generated by openapi-typescript, compiles with openapi-fetch, and calls each resource of the running service', async () => {
    const descriptionFile = join(dir, 'openapi.json');
    writeFileSync(descriptionFile, JSON.stringify(description));
    await run(
      join(PROJECT_ROOT, 'node_modules/.bin/openapi-typescript'),
      [descriptionFile, '-o', join(dir, 'schema.d.ts')],
      {
        env: { ...process.env, REDOCLY_TELEMETRY: 'off' },
      },
    );
    writeFileSync(join(dir, 'client.ts'), clientSource(description));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    const compiled = await run(join(PROJECT_ROOT, 'node_modules/.bin/tsc'), ['-p', dir]).catch(
      (error: { stdout: string }) => error,
    );
    expect(compiled.stdout, 'tsc on the generated client').toBe('');

    const { roundTrip } = (await import(pathToFileURL(join(dir, 'client.ts')).href)) as {
      roundTrip(
        baseUrl: string,
        authorizations: Record<string, string>,
      ): Promise<{
        added: { status: number; contentType: string };
        got: { status: number; qualifiedIdentifier: string; requiredICDs: string[] };
        missing: { status: number; message: string };
        calls: Array<{ resource: string; role: string; status: number }>;
      }>;
    };
    const { users } = test;
    const result = await roundTrip(test.base, {
      ADMIN: users.admin.authorization,
      SERVICE_PROVIDER: users.serviceProvider.authorization,
      ACCESS_POINT_PROVIDER: users.accessPointProvider.authorization,
      REGISTRY_AUTHORITY: users.authority.authorization,
    });
    console.log(`generated client in ${dir}:`, JSON.stringify(result.calls));

    expect(result.added).toEqual({
      status: 201,
      contentType: 'application/vnd.registry.processes.add.v1+json;charset=UTF-8',
    });
    expect(result.got).toEqual({
      status: 200,
      qualifiedIdentifier: 'cenbii-procid-ubl::urn:client:roundtrip',
      requiredICDs: ['0192'],
    });
    expect(result.missing).toEqual({
      status: 404,
      message: expect.stringMatching(/^Unable to find instance with identifier/),
    });
    const tags = new Set(
      Object.values(description.paths).flatMap((item) =>
        Object.values(item).flatMap((operation) => (operation['x-method-not-allowed'] ? [] : (operation.tags ?? []))),
      ),
    );
    expect(result.calls.map((call) => call.resource).sort()).toEqual([...tags].sort());
    for (const call of result.calls) {
      // A find answers 200; a read of a sample identifier answers 404 with the error body.
      expect([200, 404], `${call.resource} as ${call.role}`).toContain(call.status);
    }
    expect(result.calls.filter((call) => call.status === 200).length).toBeGreaterThanOrEqual(result.calls.length - 1);
  }, 120_000);
});

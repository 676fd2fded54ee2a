import { afterAll } from 'vitest';
import { stopService, type RunningService, type Storage } from './service.js';

/** What a reliability test file started, read when its tests are done. */
export interface Started {
  service?: RunningService;
  storage?: Storage;
  /** What it started beside the service (a TCP proxy, a local SML). */
  others?: ReadonlyArray<{ close(): Promise<void> } | undefined>;
}

/** After all tests of the file: kills the service it last started, closes what it started beside it, drops its storage. */
export function cleanUpAfterAll(started: () => Started): void {
  afterAll(async () => {
    const { service, storage, others = [] } = started();
    if (service) await stopService(service, 'SIGKILL');
    for (const other of others) await other?.close();
    await storage?.drop();
  });
}

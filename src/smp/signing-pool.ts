import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Identifier, PublishedProcess } from './xml.js';

export interface SigningKeyPems {
  privateKeyPem: string;
  certificatePem: string;
}

/** What the main thread sends a signing worker, and what it answers. */
export interface SigningTask {
  id: number;
  participant: Identifier;
  documentType: Identifier;
  processes: PublishedProcess[];
}
export type SigningReply = { id: number; xml: string; error?: undefined } | { id: number; error: string; xml?: undefined };

// From the sources (tsx, the tests) the worker is TypeScript and needs tsx's loader for its imports; the build is JS.
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(`./signing-worker.${FROM_SOURCE ? 'ts' : 'js'}`, import.meta.url);
const WORKER_EXEC_ARGV = FROM_SOURCE ? ['--import', 'tsx'] : undefined;

interface Pending {
  resolve(xml: string): void;
  reject(error: Error): void;
}

class SigningThread {
  readonly pending = new Map<number, Pending>();
  readonly worker: Worker;

  constructor(key: SigningKeyPems, onExit: (thread: SigningThread) => void) {
    this.worker = new Worker(WORKER_URL, { workerData: key, execArgv: WORKER_EXEC_ARGV });
    this.worker.on('message', (reply: SigningReply) => {
      const task = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (reply.error !== undefined) task?.reject(new Error(`signing failed: ${reply.error}`));
      else task?.resolve(reply.xml);
    });
    this.worker.on('error', (error) => this.failAll(error));
    this.worker.on('exit', (code) => {
      this.failAll(new Error(`the signing worker stopped (exit code ${code})`));
      onExit(this);
    });
  }

  private failAll(error: Error): void {
    for (const task of this.pending.values()) task.reject(error);
    this.pending.clear();
  }
}

/**
 * Worker threads (one per available core) that build and sign the SignedServiceMetadata, so that the RSA signature and
 * the canonicalization of a cold lookup do not hold up the event loop, which keeps answering the other requests.
 * The threads start with `start` (else with the first signatures) and end with `close`; a thread that dies is
 * replaced at the next signature.
 */
export class SigningPool {
  private readonly threads: SigningThread[] = [];
  private nextId = 0;
  private closed = false;

  constructor(private readonly key: SigningKeyPems, private readonly size = Math.max(1, availableParallelism())) {}

  sign(participant: Identifier, documentType: Identifier, processes: PublishedProcess[]): Promise<string> {
    if (this.closed) return Promise.reject(new Error('the signing pool is closed'));
    const thread = this.leastBusy();
    const id = (this.nextId += 1);
    return new Promise((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.postMessage({ id, participant, documentType, processes } satisfies SigningTask);
    });
  }

  /** Starts every thread now, so that the first lookups do not wait for a thread to load the signing code. */
  start(): void {
    while (!this.closed && this.threads.length < this.size) this.addThread();
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.threads.splice(0).map((thread) => thread.worker.terminate()));
  }

  private leastBusy(): SigningThread {
    if (this.threads.length < this.size) return this.addThread();
    return this.threads.reduce((best, thread) => (thread.pending.size < best.pending.size ? thread : best));
  }

  private addThread(): SigningThread {
    const thread = new SigningThread(this.key, (gone) => this.forget(gone));
    this.threads.push(thread);
    return thread;
  }

  private forget(thread: SigningThread): void {
    const at = this.threads.indexOf(thread);
    if (at >= 0) this.threads.splice(at, 1);
  }
}

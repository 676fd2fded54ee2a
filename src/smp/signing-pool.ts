import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { QualifiedIdentifier } from '../core/schemas.js';
import type { PublishedProcess } from './xml.js';

export interface SigningKeyPems {
  privateKeyPem: string;
  certificatePem: string;
}

/** What the main thread sends a signing worker, and what it answers. */
export interface SigningTask {
  id: number;
  /** The pair in use when the signature was asked for: it changes at a certificate rollover. */
  key: SigningKeyPems;
  participant: QualifiedIdentifier;
  documentType: QualifiedIdentifier;
  processes: PublishedProcess[];
}
export type SigningReply =
  { id: number; xml: string; error?: undefined } | { id: number; error: string; xml?: undefined };

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
  /** Armed while the thread has nothing to do: its end, unless a signature comes first. */
  idleTimer: NodeJS.Timeout | undefined;

  constructor(onExit: (thread: SigningThread) => void) {
    this.worker = new Worker(WORKER_URL, { execArgv: WORKER_EXEC_ARGV });
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

/** How long a signing thread with nothing to do is kept before it ends and gives its memory back. */
export const SIGNING_THREAD_IDLE_MS = 60_000;

/**
 * Worker threads (up to one per available core) that build and sign the SignedServiceMetadata (signed-metadata.ts),
 * so that the RSA signature of a cold lookup does not hold up the event loop, which keeps answering the other
 * requests. A thread starts with the signature that needs it (loading the signing code takes a few tens of
 * milliseconds, once) and ends after `idleMs` without work: each holds tens of megabytes of heap, which a registry
 * whose lookups are answered from the cache should not keep. A thread that dies is replaced at the next signature;
 * `close` ends them all.
 */
export class SigningPool {
  private readonly threads: SigningThread[] = [];
  private nextId = 0;
  private closed = false;

  constructor(
    /** The threads at most. */
    readonly size = Math.max(1, availableParallelism()),
    private readonly idleMs = SIGNING_THREAD_IDLE_MS,
  ) {}

  /** The threads running now. */
  get threadCount(): number {
    return this.threads.length;
  }

  sign(
    key: SigningKeyPems,
    participant: QualifiedIdentifier,
    documentType: QualifiedIdentifier,
    processes: PublishedProcess[],
  ): Promise<string> {
    if (this.closed) return Promise.reject(new Error('the signing pool is closed'));
    const thread = this.leastBusy();
    clearTimeout(thread.idleTimer);
    const id = (this.nextId += 1);
    return new Promise<string>((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.postMessage({ id, key, participant, documentType, processes } satisfies SigningTask);
    }).finally(() => this.endWhenIdle(thread));
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      this.threads.splice(0).map((thread) => {
        clearTimeout(thread.idleTimer);
        return thread.worker.terminate();
      }),
    );
  }

  /** An idle thread if there is one, else a new thread while there are fewer than `size`, else the least busy. */
  private leastBusy(): SigningThread {
    const idle = this.threads.find((thread) => thread.pending.size === 0);
    if (idle) return idle;
    if (this.threads.length < this.size) return this.addThread();
    return this.threads.reduce((best, thread) => (thread.pending.size < best.pending.size ? thread : best));
  }

  private addThread(): SigningThread {
    const thread = new SigningThread((gone) => this.forget(gone));
    this.threads.push(thread);
    return thread;
  }

  /** A thread left with nothing pending ends after `idleMs`, unless a signature comes to it first. */
  private endWhenIdle(thread: SigningThread): void {
    // A thread out of the pool (closed, or dead) has no end to wait for.
    if (thread.pending.size > 0 || !this.threads.includes(thread)) return;
    thread.idleTimer = setTimeout(() => {
      // Out of the pool first: no signature may be given to a thread that is ending.
      this.forget(thread);
      void thread.worker.terminate();
    }, this.idleMs).unref();
  }

  private forget(thread: SigningThread): void {
    clearTimeout(thread.idleTimer);
    const at = this.threads.indexOf(thread);
    if (at >= 0) this.threads.splice(at, 1);
  }
}

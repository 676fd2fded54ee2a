import { parentPort } from 'node:worker_threads';
import { signedServiceMetadata } from './signed-metadata.js';
import type { SigningReply, SigningTask } from './signing-pool.js';

// One thread of the signing pool: builds and signs each SignedServiceMetadata it is sent, with the key sent with it.
const port = parentPort;
if (!port) throw new Error('the signing worker runs in a worker thread of the signing pool');

port.on('message', ({ id, key, participant, documentType, processes }: SigningTask) => {
  let reply: SigningReply;
  try {
    reply = { id, xml: signedServiceMetadata(participant, documentType, processes, key) };
  } catch (error) {
    reply = { id, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(reply);
});

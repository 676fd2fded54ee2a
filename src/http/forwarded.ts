import proxyAddr from '@fastify/proxy-addr';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** Whether the peer `address`, `hop` steps from the server, is a proxy whose X-Forwarded-For is believed. */
export type ProxyTrust = (address: string, hop: number) => boolean;

/**
 * The trust of REGISTRY_TRUSTED_PROXIES (addresses and CIDRs, comma-separated), for Fastify's `trustProxy`:
 * `request.ip` is then the client address the nearest untrusted hop gave. False when the list is empty.
 */
export function proxyTrust(list: string | undefined): ProxyTrust | false {
  const entries = (list ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) return false;
  try {
    return proxyAddr.compile(entries);
  } catch (error) {
    throw new Error(`REGISTRY_TRUSTED_PROXIES: ${(error as Error).message}`);
  }
}

/**
 * Every per-address limit (the sign-in throttle, the password checks' turns) is only as good as `request.ip`:
 * says once in the log when a peer that is not trusted sends X-Forwarded-For, a proxy the setting does not name.
 */
async function untrustedForwarding(fastify: FastifyInstance, options: { trust: ProxyTrust | false }) {
  let warned = false;
  fastify.addHook('onRequest', (request, _reply, done) => {
    const peer = request.socket.remoteAddress;
    if (
      !warned &&
      request.headers['x-forwarded-for'] !== undefined &&
      peer !== undefined &&
      !(options.trust && options.trust(peer, 0))
    ) {
      warned = true;
      request.log.warn(
        { peer },
        `requests from ${peer} carry X-Forwarded-For, but REGISTRY_TRUSTED_PROXIES does not name it: ` +
          "their client address is taken to be the peer's, so every client behind it shares the per-address limits of sign-in",
      );
    }
    done();
  });
}

export default fp(untrustedForwarding, { name: 'untrusted-forwarding' });

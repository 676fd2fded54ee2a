import net from 'node:net';

/** A TCP proxy in front of PostgreSQL that can cut every connection and refuse new ones, then let them through again. */
export interface TcpProxy {
  port: number;
  /** Resets every open connection and every new one until `restore`. */
  cut(): void;
  restore(): void;
  /** Connections reset while cut, so far: a client has tried. */
  refused(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let open = true;
  let refused = 0;
  const server = net.createServer((client) => {
    if (!open) {
      refused += 1;
      return void client.resetAndDestroy();
    }
    const upstream = net.connect(targetPort, targetHost);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() {
      open = false;
      for (const socket of sockets) socket.resetAndDestroy();
    },
    restore() {
      open = true;
    },
    refused: () => refused,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

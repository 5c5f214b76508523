/**
 * Loopback listeners for the outbound audit (test/outbound-audit.test.ts): each records every TCP
 * connection that reaches it, on 127.0.0.1 and on ::1 at the same port, so a probe spelled as an IPv4
 * or an IPv6 loopback address (mapped, unspecified, decimal…) is seen whichever way it connects.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from 'node:net';

export interface Recorder {
  port: number;
  /** TCP connections accepted so far (both addresses). */
  connections(): number;
  /** HTTP request lines seen so far (HTTP recorders only). */
  requests: string[];
  close(): Promise<void>;
}

const listen = (server: Server, port: number, host: string) =>
  new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });

const closeServer = (server: Server & { closeAllConnections?: () => void }) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections?.();
    if (!server.listening) return resolve();
    server.close(() => resolve());
  });

/** Two servers from `make` on one port: 127.0.0.1 (port 0) and ::1 (the same port, when IPv6 is there). */
async function dualStack(make: () => Server): Promise<{ port: number; servers: Server[] }> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const v4 = make();
    await listen(v4, 0, '127.0.0.1');
    const port = (v4.address() as AddressInfo).port;
    const v6 = make();
    try {
      await listen(v6, port, '::1');
      return { port, servers: [v4, v6] };
    } catch (error) {
      await closeServer(v4);
      // No IPv6 loopback on this machine: one server is all there is to record on.
      if ((error as NodeJS.ErrnoException).code === 'EADDRNOTAVAIL') {
        const only = make();
        await listen(only, 0, '127.0.0.1');
        return { port: (only.address() as AddressInfo).port, servers: [only] };
      }
    }
  }
  throw new Error('no port free on both 127.0.0.1 and ::1');
}

/** A raw TCP listener that counts connections and closes each at once (no protocol spoken). */
export async function recordingTcp(): Promise<Recorder> {
  let connections = 0;
  const { port, servers } = await dualStack(() =>
    createTcpServer((socket: Socket) => {
      connections++;
      socket.destroy();
    }),
  );
  return {
    port,
    connections: () => connections,
    requests: [],
    close: async () => {
      await Promise.all(servers.map(closeServer));
    },
  };
}

/**
 * An HTTP listener that counts connections and request lines; `handler` answers (default: a JSON body
 * holding `canary`, so a probe that did reach it would carry the canary into its output).
 */
export async function recordingHttp(
  canary: string,
  handler?: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Recorder> {
  let connections = 0;
  const requests: string[] = [];
  const { port, servers } = await dualStack(() => {
    const server = createHttpServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      // No keep-alive: every request a client makes opens a connection this recorder counts.
      res.setHeader('connection', 'close');
      if (handler) return handler(req, res);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ canary }));
    });
    server.on('connection', () => {
      connections++;
    });
    return server;
  });
  return {
    port,
    connections: () => connections,
    requests,
    close: async () => {
      await Promise.all(servers.map(closeServer));
    },
  };
}

/**
 * A minimal FTP control server on 127.0.0.1: logs anyone in and answers EPSV / PASV with `dataPort` on
 * its own address, so a client's data connection goes to a loopback port the operator did not name.
 */
export async function passiveRedirectFtp(
  dataPort: number,
): Promise<{ port: number; close(): Promise<void> }> {
  const open = new Set<Socket>();
  const server = createTcpServer((socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => undefined);
    const say = (line: string) => {
      if (!socket.destroyed) socket.write(`${line}\r\n`);
    };
    say('220 audit ftp ready');
    let buffered = '';
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      for (let at = buffered.indexOf('\r\n'); at >= 0; at = buffered.indexOf('\r\n')) {
        const line = buffered.slice(0, at);
        buffered = buffered.slice(at + 2);
        const verb = (line.split(' ')[0] ?? '').toUpperCase();
        if (verb === 'USER') say('331 password please');
        else if (verb === 'PASS') say('230 logged in');
        else if (verb === 'FEAT') say('211 End');
        else if (verb === 'PWD') say('257 "/" is the current directory');
        else if (verb === 'EPSV') say(`229 Entering Extended Passive Mode (|||${dataPort}|)`);
        else if (verb === 'PASV')
          say(`227 Entering Passive Mode (127,0,0,1,${dataPort >> 8},${dataPort & 255})`);
        else if (verb === 'LIST' || verb === 'MLSD' || verb === 'NLST') say('425 no data connection');
        else if (verb === 'QUIT') {
          say('221 bye');
          socket.end();
        } else say('200 ok');
      }
    });
  });
  await listen(server, 0, '127.0.0.1');
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      for (const socket of open) socket.destroy();
      return closeServer(server);
    },
  };
}

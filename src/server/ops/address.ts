import net from 'node:net';
import { OpsError } from './errors.js';

/** The URL a local server answers on, from its listen address (a wildcard address is reached on loopback). */
export function localBaseUrl(host: string, port: number): string {
  const probe = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${probe.includes(':') ? `[${probe}]` : probe}:${port}`;
}

/** Why a listen failed, as the refusal `svc server start` ends with; undefined for an error it does not know. */
function listenError(err: NodeJS.ErrnoException, host: string, port: number): OpsError | undefined {
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  switch (err.code) {
    case 'EADDRINUSE':
      return new OpsError(
        `${where} is in use by another process`,
        6,
        'ADDRESS_IN_USE',
        'Pick another port with --port or PORT, or stop what holds it (`svc server stop` when it is an svc server on this data dir).',
      );
    case 'EADDRNOTAVAIL':
      return new OpsError(
        `Cannot listen on ${where}: ${host} is not an address of this machine`,
        2,
        'ADDRESS_NOT_AVAILABLE',
        'Set --host or HOST to one of its addresses, 127.0.0.1 (this machine only) or 0.0.0.0 (every address).',
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
      return new OpsError(
        `Cannot listen on ${where}: the host name ${host} does not resolve`,
        2,
        'HOST_NOT_FOUND',
        'Set --host or HOST to an IP address of this machine, or a name that resolves to one.',
      );
    case 'EACCES':
      return new OpsError(
        `Not permitted to listen on ${where}`,
        4,
        'PORT_NOT_PERMITTED',
        'Ports below 1024 need privileges: use a port of 1024 or more (behind a reverse proxy), or grant CAP_NET_BIND_SERVICE.',
      );
    default:
      return undefined;
  }
}

/** A bound TCP socket, not yet serving: connections wait in its backlog until a server takes its handle. */
export interface BoundSocket {
  /** The address and port it is bound to (the port picked by the system when 0 was asked). */
  address: string;
  port: number;
  /** Where a client on this machine reaches it. */
  url: string;
  /** Hands the listening handle over, for `server.listen({ handle })`: the server that takes it serves these
   * connections and closes it (Node's documented hand-over of a listening handle). */
  takeHandle(): object;
  /** Gives the server that took the handle the connections accepted before it did (held paused meanwhile). */
  handOverEarlyConnections(server: net.Server): void;
  /** Closes it, unless a server has taken it. */
  close(): void;
}

/** Binds host:port, so a port in use or an address the machine lacks fails before anything is written. */
export async function bindSocket(host: string, port: number): Promise<BoundSocket> {
  // Connections that arrive while the app is built are accepted here, paused, and handed to the server that
  // takes the handle; otherwise they would hang on this server, which has no one to answer them.
  const early: net.Socket[] = [];
  const server = net.createServer({ pauseOnConnect: true }, (connection) => early.push(connection));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port }, () => {
        server.removeListener('error', reject);
        resolve();
      });
    });
  } catch (err) {
    server.close();
    throw listenError(err as NodeJS.ErrnoException, host, port) ?? err;
  }
  const bound = server.address() as net.AddressInfo;
  let taken = false;
  const handle = (server as unknown as { _handle: object })._handle;
  return {
    address: bound.address,
    port: bound.port,
    url: localBaseUrl(bound.address, bound.port),
    takeHandle() {
      taken = true;
      return handle;
    },
    handOverEarlyConnections(target) {
      for (const connection of early.splice(0)) {
        target.emit('connection', connection);
        connection.resume();
      }
    },
    close() {
      if (!taken) server.close();
    },
  };
}

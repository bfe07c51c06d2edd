/**
 * A local https server with a fresh self-signed certificate (openssl), for tests
 * that fetch over real TLS: the certificate names the given host names, 127.0.0.1
 * and localhost, so a test can reach it by a made-up name through an injected
 * resolver and still have the name checked against the certificate.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TlsServer {
  readonly server: Server;
  readonly port: number;
  /** The certificate, to trust as a CA. */
  readonly cert: Buffer;
  readonly certPath: string;
  close(): Promise<void>;
}

export async function startTlsServer(names: readonly string[], handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<TlsServer> {
  const dir = await mkdtemp(join(tmpdir(), 'chatctx-tls-'));
  const [keyPath, certPath] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
  const alt = [...names.map((name) => `DNS:${name}`), 'DNS:localhost', 'IP:127.0.0.1'].join(',');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-addext', `subjectAltName=${alt}`, '-days', '1', '-keyout', keyPath, '-out', certPath], { stdio: 'ignore' });
  const cert = await readFile(certPath);
  const server = createServer({ key: await readFile(keyPath), cert }, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    port: (server.address() as AddressInfo).port,
    cert,
    certPath,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

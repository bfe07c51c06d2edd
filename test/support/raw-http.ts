/**
 * A raw HTTP/1.1 connection to a test server, for requests fetch cannot send: a
 * body written in parts, slowly, or never finished.
 */
import { connect } from 'node:net';

export interface RawConnection {
  /** Writes to the socket as is. */
  write(text: string): void;
  /** Everything the server sent so far. */
  reply(): string;
  /** Settles when the connection is closed (by the server or the client). */
  readonly closed: Promise<void>;
}

export function rawConnection(url: string): RawConnection {
  const target = new URL(url);
  const socket = connect(Number(target.port), target.hostname);
  let reply = '';
  socket.on('data', (chunk) => (reply += chunk));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return { write: (text) => void socket.write(text), reply: () => reply, closed };
}

/** The head of a POST to the MCP endpoint announcing `contentLength` bytes of JSON, blank line included. */
export function mcpPostHead(url: string, contentLength: number, extraHeaders: readonly string[] = []): string {
  const target = new URL(url);
  return [
    `POST ${target.pathname} HTTP/1.1`,
    `Host: ${target.host}`,
    'Content-Type: application/json',
    'Accept: application/json, text/event-stream',
    ...extraHeaders,
    `Content-Length: ${contentLength}`,
    '',
    '',
  ].join('\r\n');
}

/**
 * The local server's admin endpoint: loopback only, on a random port, for the
 * bearer token in the data directory's 0600 `admin-token`. It lets CLI commands
 * run while the server holds the store (PGlite allows one process per data
 * directory).
 *
 * `POST /admin` with an admin command answers in NDJSON: zero or more progress
 * lines while a long command (embedding) runs, then one outcome line, all in the
 * shapes of `admin/admin-envelope.ts`. The status is the outcome's
 * (`ADMIN_HTTP_STATUS`), or 200 once progress lines have started.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../ports/logger.ts';
import { runEnveloped, type AdminDeps } from '../admin/admin-operations.ts';
import { ADMIN_HTTP_STATUS, errorEnvelope, type AdminLine } from '../admin/admin-envelope.ts';
import { AppError, ValidationError } from '../errors/app-error.ts';
import type { EmbedProgress } from '../embeddings/record-embeddings.ts';

/** Large enough for an import of many thousands of records in one command. */
const ADMIN_BODY_LIMIT = 64 * 1024 * 1024;

export function createAdminEndpoint(deps: AdminDeps, token: string, logger: Logger) {
  const expected = Buffer.from(token);
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const write = (line: AdminLine, status = 200) => {
      if (!res.headersSent) res.writeHead(status, { 'Content-Type': 'application/x-ndjson' });
      res.write(JSON.stringify(line) + '\n');
    };
    const finish = (line: AdminLine) => {
      write(line, 'error' in line ? ADMIN_HTTP_STATUS[line.error.code] : 200);
      res.end();
    };
    if (req.method !== 'POST' || req.url !== '/admin') return finish(errorEnvelope(new AppError('not_found', 'POST /admin only.')));
    if (!bearerMatches(req, expected)) {
      return finish(errorEnvelope(new AppError('unauthorized', 'Invalid admin token.')));
    }
    let command: unknown;
    try {
      command = await readCommand(req);
    } catch (error) {
      return finish(errorEnvelope(error));
    }
    const onProgress = (progress: EmbedProgress) => write({ progress });
    finish(await runEnveloped({ ...deps, onProgress }, command, logger));
  };
}

/** Whether the request carries the admin token as its bearer credential (constant-time). */
export function bearerMatches(req: IncomingMessage, expected: Buffer): boolean {
  const presented = Buffer.from(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '');
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

async function readCommand(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > ADMIN_BODY_LIMIT) throw new ValidationError('Admin request too large.');
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new ValidationError('The admin request body is not valid JSON.');
  }
}

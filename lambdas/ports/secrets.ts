/**
 * The `Secrets` port: the server-side pepper behind every HMAC (API keys, guest IPs,
 * query hashes). Locally a 0600 file; on AWS a Secrets Manager secret cached per
 * cold start. Consumers take this port, never a bare function or the bytes, so the
 * adapter decides caching and refresh.
 */
/** A database login, as the stack stores each role's secret. */
export interface RoleCredentials {
  readonly username: string;
  readonly password: string;
}

export interface Secrets {
  /** The pepper bytes (at least 32). Implementations cache; callers may call this per request. */
  pepper(): Promise<Buffer>;
}

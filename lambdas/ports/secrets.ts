/**
 * The `Secrets` port: the server-side pepper behind every HMAC (API keys, guest IPs,
 * query hashes). Locally a 0600 file; on AWS a Secrets Manager secret cached per
 * cold start.
 */
export interface Secrets {
  /** The pepper bytes. Implementations cache; callers may call this per request. */
  pepper(): Promise<Buffer>;
}

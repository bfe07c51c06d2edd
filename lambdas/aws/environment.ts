/**
 * Fail-fast reading of Lambda environment variables: a missing or malformed value
 * stops the cold start with a message naming the variable, never a silent default.
 */
export function requiredEnv(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (value === undefined || value.trim() === '') throw new Error(`Environment variable ${name} is required.`);
  return value.trim();
}

export function integerEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`Environment variable ${name} must be a whole number.`);
  return value;
}

export function listEnv(env: NodeJS.ProcessEnv, name: string, fallback: string[] = []): string[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  return raw
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s.length > 0);
}

/** The Data API connection every database-using function is given. */
export function databaseEnv(env: NodeJS.ProcessEnv): { resourceArn: string; secretArn: string; database: string } {
  return { resourceArn: requiredEnv(env, 'DB_CLUSTER_ARN'), secretArn: requiredEnv(env, 'DB_SECRET_ARN'), database: requiredEnv(env, 'DB_NAME') };
}

/**
 * `records verify`: every source of the named records (by default all approved
 * and candidate ones) checked against its page (`source-check.ts`), a few at a
 * time and at most two at once per host, and each result stored in
 * `source_checks` (`schema/007_source_checks.sql`). The newest check of a URL and
 * excerpt is what the evidence gate, `records show` and `records stale` read.
 */
import type { Sql } from '../ports/sql.ts';
import { excerptHash } from './evidence-text.ts';
import { checkSource, type SourceCheck, type SourceCheckLimits, type SourceCheckStatus, type SourceFetcher } from './source-check.ts';
import { textSet } from './record-identifiers.ts';

/** Checks running at once, in all, and against one host (politeness). */
const CONCURRENCY = 8;
const PER_HOST = 2;

export interface VerifiedSource extends SourceCheck {
  /** The records quoting this excerpt from this URL. */
  readonly slugs: readonly string[];
}

export interface StoredCheck {
  readonly status: SourceCheckStatus;
  /** Fetched by a check, read by a draft, or declared by the record file (`verified_at`, never stored). */
  readonly how: 'fetched' | 'draft' | 'declared';
  readonly detail: string | null;
  readonly closest: string | null;
  readonly similarity: number | null;
  readonly checkedAt: string;
}

/** The sources to check: each URL and excerpt once, with the records that quote it. */
export async function sourcesToVerify(sql: Sql, identifiers?: readonly string[]): Promise<{ url: string; excerpt: string; slugs: string[] }[]> {
  const named = identifiers && identifiers.length > 0;
  const rows = await sql.query<{ slug: string; url: string; evidence_excerpt: string }>(
    `SELECT r.slug, s.url, s.evidence_excerpt
       FROM records r JOIN record_sources s ON s.record_id = r.id
      WHERE s.evidence_excerpt IS NOT NULL
        AND ${named ? `(r.slug = ANY (${textSet(1)}) OR r.id::text = ANY (${textSet(1)}))` : "r.status IN ('approved', 'candidate')"}
      ORDER BY r.slug, s.position`,
    named ? [JSON.stringify(identifiers)] : [],
  );
  const sources = new Map<string, { url: string; excerpt: string; slugs: string[] }>();
  for (const row of rows) {
    const key = checkKey(row.url, row.evidence_excerpt);
    const source = sources.get(key) ?? { url: row.url, excerpt: row.evidence_excerpt, slugs: [] };
    if (!source.slugs.includes(row.slug)) source.slugs.push(row.slug);
    sources.set(key, source);
  }
  return [...sources.values()];
}

/** Checks the sources and stores every result; returns them in the order given. */
export async function verifySources(
  sql: Sql,
  fetcher: SourceFetcher,
  sources: readonly { url: string; excerpt: string; slugs: readonly string[] }[],
  limits: SourceCheckLimits,
  /** Once aborted no further source is started (the ones running finish within their deadline). */
  signal?: AbortSignal,
): Promise<VerifiedSource[]> {
  const results: VerifiedSource[] = new Array(sources.length);
  const busyHosts = new Map<string, number>();
  const waiting = sources.map((source, index) => ({ source, index }));
  const next = () => {
    const at = waiting.findIndex(({ source }) => (busyHosts.get(new URL(source.url).host) ?? 0) < PER_HOST);
    return at < 0 ? undefined : waiting.splice(at, 1)[0];
  };
  const worker = async (): Promise<void> => {
    for (;;) {
      if (signal?.aborted) return;
      const job = next();
      if (!job) {
        if (waiting.length === 0) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
        continue;
      }
      const host = new URL(job.source.url).host;
      busyHosts.set(host, (busyHosts.get(host) ?? 0) + 1);
      try {
        const check = await checkSource(fetcher, job.source, limits);
        await storeCheck(sql, check, 'fetched');
        results[job.index] = { ...check, slugs: job.source.slugs };
      } finally {
        busyHosts.set(host, busyHosts.get(host)! - 1);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, sources.length) }, worker));
  return results.filter((result) => result !== undefined);
}

export async function storeCheck(sql: Sql, check: SourceCheck, how: 'fetched' | 'draft'): Promise<void> {
  await sql.query(
    `INSERT INTO source_checks (url, excerpt_hash, status, how, detail, text_hash, closest, similarity, checked_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::timestamptz)`,
    [check.url, check.excerptHash, check.status, how, check.detail ?? null, check.textHash ?? null, check.closest ?? null, check.similarity ?? null, check.checkedAt.toISOString()],
  );
}

/** The newest check of each source (URL and excerpt), keyed by `checkKey`. */
export async function latestChecks(sql: Sql, sources: readonly { url: string; evidence_excerpt?: string | null }[]): Promise<Map<string, StoredCheck>> {
  const pairs = new Map(sources.flatMap((s) => (s.evidence_excerpt ? [[checkKey(s.url, s.evidence_excerpt), { url: s.url, excerpt_hash: excerptHash(s.evidence_excerpt) }]] : [])));
  if (pairs.size === 0) return new Map();
  // One probe of source_checks_latest per source: the newest row of that URL and excerpt.
  const rows = await sql.query<{ url: string; excerpt_hash: string; status: SourceCheckStatus; how: 'fetched' | 'draft'; detail: string | null; closest: string | null; similarity: number | null; checked_at: string }>(
    `SELECT k.url, k.excerpt_hash, c.status, c.how, c.detail, c.closest, c.similarity, c.checked_at::text AS checked_at
       FROM jsonb_to_recordset($1::jsonb) AS k(url text, excerpt_hash text)
       CROSS JOIN LATERAL (SELECT status, how, detail, closest, similarity, checked_at FROM source_checks s
                            WHERE s.url = k.url AND s.excerpt_hash = k.excerpt_hash
                            ORDER BY s.checked_at DESC LIMIT 1) c`,
    [JSON.stringify([...pairs.values()])],
  );
  return new Map(rows.map((row) => [`${row.url} ${row.excerpt_hash}`, { status: row.status, how: row.how, detail: row.detail, closest: row.closest, similarity: row.similarity, checkedAt: row.checked_at }]));
}

/** The key a source's checks go under: its URL and its excerpt's digest (a URL holds no space). */
export function checkKey(url: string, excerpt: string): string {
  return `${url} ${excerptHash(excerpt)}`;
}

/**
 * Fills the excerpt digest of source rows imported before it was kept
 * (`schema/008_evidence_standing.sql`): run after migrating, by the local store
 * and the migrate function. Returns how many rows it filled.
 */
export async function fillExcerptHashes(sql: Sql): Promise<number> {
  const rows = await sql.query<{ record_id: string; position: number; evidence_excerpt: string }>(
    'SELECT record_id::text AS record_id, position, evidence_excerpt FROM record_sources WHERE excerpt_hash IS NULL AND evidence_excerpt IS NOT NULL',
  );
  if (rows.length === 0) return 0;
  await sql.query(
    `UPDATE record_sources s SET excerpt_hash = x.excerpt_hash
       FROM jsonb_to_recordset($1::jsonb) AS x(record_id uuid, position int, excerpt_hash text)
      WHERE s.record_id = x.record_id AND s.position = x.position`,
    [JSON.stringify(rows.map((r) => ({ record_id: r.record_id, position: r.position, excerpt_hash: excerptHash(r.evidence_excerpt) })))],
  );
  return rows.length;
}

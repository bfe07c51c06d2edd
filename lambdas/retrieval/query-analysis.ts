/**
 * What a question says besides its subject. Agents write their stack, their error
 * text and their story into a query ("… in node-postgres on our EKS pods, exit code
 * 137"); a record must not have to contain all of that to match. This module reads
 * the query once and sorts its words into roles that retrieval weighs differently:
 *
 * - **context**: technologies named in the text (languages, runtimes, frameworks,
 *   databases, drivers, platforms, cloud services; `STACK_TECHNOLOGIES` and
 *   `IMPLIED_TECHNOLOGIES` in records/technology-vocabulary.ts) and the versions
 *   written after them. They become applicability signals (the technology bonus,
 *   `technology_filter_fallback`, version checks) and weigh less in BM25; coverage
 *   ignores them.
 * - **bonus**: error codes, exception and other code identifiers, numbers, and words
 *   that carry no subject ("fails", "getting", "production"). They count for a record
 *   that contains them and never against one that does not.
 * - **synonym**: a term the synonym list knows, with its expansions appended to the
 *   searched text; the term and its expansions are one concept for coverage.
 *
 * Every other word is the subject. Pure and synchronous: no SQL, no encoder. The
 * stemming is Postgres' own (the retrieval statement turns each group's text into
 * lexemes), so roles and index agree on what a word is.
 */
import { STACK_TECHNOLOGIES, canonicalTechnology, technologiesInText } from '../records/technology-vocabulary.ts';
import type { SynonymList } from '../records/query-synonyms.ts';

export type GroupRole = 'context' | 'bonus' | 'synonym';

/** A piece of the query with a role; the retrieval statement reports each one's lexemes. */
export interface QueryGroup {
  readonly text: string;
  readonly role: GroupRole;
  /** Multiplies the BM25 contribution of its words. */
  readonly weight: number;
  /** Synonym groups: the concept (0-based) this alternative belongs to; 0 is the term as written. */
  readonly concept?: number;
  readonly alternative?: number;
}

export interface QueryAnalysis {
  /** The text the keyword side searches: the query, then any synonym expansions. */
  readonly searchText: string;
  readonly groups: readonly QueryGroup[];
  /** Stack technologies the text names, canonical, in order of appearance. */
  readonly technologies: readonly string[];
  /** Versions written after a named technology ("node 20" → Node.js: "20"). */
  readonly versions: Readonly<Record<string, string>>;
}

/** BM25 weight of a context word: it still ranks (a PostgreSQL record for a PostgreSQL question) but cannot carry a match. */
export const CONTEXT_WEIGHT = 0.5;

/**
 * Words of developers' questions that say nothing about what is asked: the story
 * ("suddenly", "production", "trying"), the verdict ("fails", "broken", "doesn't
 * work"), the place ("app", "project"). Stop words are already out; these are not.
 */
const GENERIC_WORDS = new Set(
  (
    'problem problems issue issues bug bugs question questions help please thanks thank hi hello error errors fail fails failed ' +
    'failing failure failures broken break breaks breaking work works working worked doesnt didnt isnt cant cannot wont unable ' +
    'try trying tried attempt attempting want wants wanted need needs needed get gets getting got make makes making made ' +
    'use uses using used way ways best better good bad right wrong correct correctly proper properly new old current currently ' +
    'latest sometimes randomly suddenly always never still again every lot lots thing things stuff something anything someone ' +
    'app apps application applications project projects code system environment production prod dev development local locally ' +
    'setup run runs running ran start starts started seems seem seemed look looks looking like also even just really actually ' +
    'instead case cases example examples idea feature features support supported possible able allow allows option options ' +
    'default behavior behaviour expected unexpected happen happens happened occur occurs weird strange issue know recommended ' +
    'recommend approach approaches practice practices pattern patterns handle handling implement implementing implementation ' +
    'add adding added create creating created call calls calling called return returns returned value values data result results'
  ).split(' '),
);

/** Identifiers, codes and numbers: `ECONNRESET`, `ERR_REQUIRE_ESM`, `HttpClient`, `useEffect`, `os.Exit`, `137`, `40P01`. */
const CODE_LIKE = /^(?:\d[\w.:/-]*|E[A-Z]{3,}|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Za-z]*\d[A-Za-z\d]*|[a-z]+[A-Z]\w*|[A-Z][a-z\d]+[A-Z]\w*|[A-Z]{2,}[a-z]\w*|\w+(?:\.\w+)+\(?\)?)$/;

const WORD = /[\p{L}\p{N}][\p{L}\p{N}_.:'’/+#-]*[\p{L}\p{N}+#]|[\p{L}\p{N}]/gu;

const trimPunctuation = (word: string) => word.replace(/^[.:/'’-]+|[.:/'’-]+$/g, '');

/** Each synonym term found in the query (whole words, any case), with its expansions. */
function synonymsIn(query: string, synonyms: SynonymList): { term: string; expansions: readonly string[] }[] {
  const lower = query.toLowerCase();
  const found: { term: string; expansions: readonly string[] }[] = [];
  for (const [term, expansions] of synonyms) {
    let at = lower.indexOf(term);
    while (at >= 0) {
      const before = at === 0 ? '' : lower[at - 1]!;
      const after = lower[at + term.length] ?? '';
      if (!/[\p{L}\p{N}_]/u.test(before) && !/[\p{L}\p{N}_]/u.test(after)) {
        found.push({ term: query.slice(at, at + term.length), expansions });
        break;
      }
      at = lower.indexOf(term, at + 1);
    }
  }
  return found;
}

export function analyseQuery(query: string, synonyms: SynonymList = new Map()): QueryAnalysis {
  const groups: QueryGroup[] = [];
  const technologies: string[] = [];
  const versions: Record<string, string> = {};
  for (const named of technologiesInText(query)) {
    const stack = named.technologies.map(canonicalTechnology).filter((t) => STACK_TECHNOLOGIES.has(t));
    // A named standard (CORS, JWT, OAuth…) is what the question is about: it stays a subject word.
    if (stack.length === 0 && named.technologies.length > 0) continue;
    groups.push({ text: named.version ? `${named.text} ${named.version}` : named.text, role: 'context', weight: CONTEXT_WEIGHT });
    for (const t of stack) if (!technologies.includes(t)) technologies.push(t);
    if (named.version && stack.length === 1) versions[stack[0]!] ??= named.version;
  }
  const bonus = (query.match(WORD) ?? []).map(trimPunctuation).filter((w) => w !== '' && (CODE_LIKE.test(w) || GENERIC_WORDS.has(w.toLowerCase().replace(/['’]/g, ''))));
  if (bonus.length > 0) groups.push({ text: [...new Set(bonus)].join(' '), role: 'bonus', weight: 1 });
  const expansions: string[] = [];
  synonymsIn(query, synonyms).forEach((found, concept) => {
    groups.push({ text: found.term, role: 'synonym', weight: 1, concept, alternative: 0 });
    found.expansions.forEach((expansion, i) => {
      groups.push({ text: expansion, role: 'synonym', weight: 1, concept, alternative: i + 1 });
      expansions.push(expansion);
    });
  });
  return { searchText: expansions.length > 0 ? `${query}\n${expansions.join('\n')}` : query, groups, technologies, versions };
}

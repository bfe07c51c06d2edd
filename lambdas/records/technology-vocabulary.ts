/**
 * The canonical technology vocabulary. Callers name technologies however they like
 * ("reactjs", "node", "postgres"); records name them canonically. Both sides go
 * through `canonicalTechnology`, so a filter or a version check matches whatever
 * spelling the agent used. Unknown names pass through unchanged (matching is then
 * case-insensitive), so an owner can use a technology before it is listed here.
 */

/** Canonical name → aliases (the canonical name itself always matches). */
export const TECHNOLOGY_ALIASES: Readonly<Record<string, readonly string[]>> = {
  React: ['react', 'reactjs', 'react.js', 'react js', 'react-dom'],
  'Next.js': ['next', 'nextjs', 'next js'],
  Vue: ['vue', 'vuejs', 'vue.js'],
  Angular: ['angular', 'angularjs'],
  Svelte: ['svelte', 'sveltekit'],
  'Node.js': ['node', 'nodejs', 'node.js', 'node js'],
  Deno: ['deno'],
  Bun: ['bun'],
  TypeScript: ['ts', 'typescript', 'tsc'],
  JavaScript: ['js', 'javascript', 'ecmascript', 'es6'],
  HTML: ['html', 'html5'],
  CSS: ['css', 'css3'],
  SQL: ['sql'],
  PostgreSQL: ['postgres', 'postgresql', 'pg', 'psql', 'pgsql', 'aurora postgresql'],
  MySQL: ['mysql', 'mariadb'],
  SQLite: ['sqlite', 'sqlite3'],
  Redis: ['redis'],
  MongoDB: ['mongo', 'mongodb'],
  DynamoDB: ['dynamodb', 'dynamo'],
  AWS: ['aws', 'amazon web services'],
  'AWS Lambda': ['lambda', 'aws lambda', 'aws-lambda'],
  Kubernetes: ['kubernetes', 'k8s'],
  Docker: ['docker', 'dockerfile'],
  Terraform: ['terraform', 'tf'],
  HTTP: ['http', 'https', 'http/1.1', 'http/2', 'rest', 'rest api'],
  'Fetch API': ['fetch', 'fetch api', 'window.fetch'],
  GraphQL: ['graphql', 'gql'],
  'Content Security Policy': ['csp', 'content security policy', 'content-security-policy'],
  WCAG: ['wcag', 'wcag2', 'wcag 2.1', 'wcag 2.2', 'accessibility guidelines'],
  'WAI-ARIA': ['aria', 'wai-aria', 'wai aria'],
  'OWASP Cheat Sheet Series': ['owasp', 'owasp cheat sheets', 'owasp cheat sheet series'],
  'Testing Library': ['testing library', 'testing-library', 'react testing library', 'rtl', '@testing-library/react'],
  Vitest: ['vitest'],
  Jest: ['jest'],
  Playwright: ['playwright'],
  Express: ['express', 'expressjs', 'express.js'],
  Fastify: ['fastify'],
  Python: ['python', 'python3', 'py'],
  Django: ['django'],
  FastAPI: ['fastapi'],
  Go: ['go', 'golang'],
  Rust: ['rust'],
  Java: ['java', 'jvm'],
  'C#': ['c#', 'csharp', 'c sharp'],
  '.NET': ['.net', 'dotnet', 'asp.net', 'asp.net core'],
  'Model Context Protocol': ['mcp', 'model context protocol'],
  '@modelcontextprotocol/sdk': ['@modelcontextprotocol/sdk', 'mcp sdk', 'mcp typescript sdk'],
  Flask: ['flask'],
  SQLAlchemy: ['sqlalchemy'],
  Pydantic: ['pydantic'],
  pytest: ['pytest', 'py.test'],
  pip: ['pip', 'pypi'],
  'Spring Boot': ['spring boot', 'spring-boot', 'springboot'],
  Spring: ['spring', 'spring framework'],
  JUnit: ['junit', 'junit5', 'junit 5', 'jupiter'],
  Maven: ['maven', 'mvn'],
  Gradle: ['gradle'],
  'Entity Framework Core': ['entity framework core', 'ef core', 'efcore', 'entity framework'],
  xUnit: ['xunit', 'xunit.net'],
  Kotlin: ['kotlin'],
  npm: ['npm', 'npm cli'],
  pnpm: ['pnpm'],
  ESLint: ['eslint'],
  Vite: ['vite'],
  Zod: ['zod'],
  OpenAPI: ['openapi', 'swagger', 'openapi 3'],
  'JSON Schema': ['json schema', 'jsonschema'],
  gRPC: ['grpc'],
  WebSocket: ['websocket', 'websockets', 'ws'],
  CORS: ['cors', 'cross-origin resource sharing'],
  TLS: ['tls', 'ssl', 'https certificates'],
  OAuth: ['oauth', 'oauth2', 'oauth 2', 'oauth 2.0', 'oauth 2.1'],
  'OpenID Connect': ['openid connect', 'oidc', 'openid'],
  JWT: ['jwt', 'json web token', 'json web tokens', 'jose'],
  WebAuthn: ['webauthn', 'passkeys', 'passkey', 'fido2'],
  Cookies: ['cookie', 'cookies', 'http cookies', 'set-cookie'],
  OpenTelemetry: ['opentelemetry', 'otel'],
  Prometheus: ['prometheus'],
  'GitHub Actions': ['github actions', 'gha'],
  Helm: ['helm', 'helm charts'],
  'AWS CDK': ['aws cdk', 'cdk', 'aws-cdk', 'aws-cdk-lib'],
  CloudFormation: ['cloudformation', 'aws cloudformation', 'cfn'],
  'Amazon API Gateway': ['api gateway', 'amazon api gateway', 'aws api gateway'],
  'Amazon SQS': ['sqs', 'amazon sqs', 'aws sqs'],
  'Amazon S3': ['s3', 'amazon s3', 'aws s3'],
  'AWS IAM': ['iam', 'aws iam'],
  'AWS Secrets Manager': ['secrets manager', 'aws secrets manager'],
  'Amazon EventBridge': ['eventbridge', 'amazon eventbridge'],
  'AWS Step Functions': ['step functions', 'aws step functions'],
  Kafka: ['kafka', 'apache kafka'],
  RabbitMQ: ['rabbitmq'],
  Nginx: ['nginx'],
  Git: ['git'],
  Ruby: ['ruby'],
  'Ruby on Rails': ['rails', 'ruby on rails', 'ror'],
  PHP: ['php'],
  Laravel: ['laravel'],
  Swift: ['swift'],
  'C++': ['c++', 'cpp'],
  Scala: ['scala'],
  Elixir: ['elixir'],
  Azure: ['azure', 'microsoft azure'],
  'Google Cloud': ['google cloud', 'gcp', 'google cloud platform'],
  Prisma: ['prisma'],
  Hibernate: ['hibernate', 'jpa', 'spring data jpa'],
  NestJS: ['nestjs', 'nest.js'],
  Redux: ['redux', 'redux toolkit'],
};

/**
 * Technologies that describe where a question comes from (its language, runtime,
 * framework, database, driver, platform or cloud service) rather than what it asks
 * about. Named in a query, they are applicability signals: a bonus for records that
 * declare them, never words a record must contain to match. Standards and protocols
 * (CORS, JWT, OAuth, WCAG, HTTP, TLS…) are not here: naming one usually is the question.
 */
export const STACK_TECHNOLOGIES: ReadonlySet<string> = new Set([
  'React', 'Next.js', 'Vue', 'Angular', 'Svelte', 'Node.js', 'Deno', 'Bun', 'TypeScript', 'JavaScript',
  'PostgreSQL', 'MySQL', 'SQLite', 'Redis', 'MongoDB', 'DynamoDB', 'AWS', 'AWS Lambda', 'Kubernetes', 'Docker',
  'Express', 'Fastify', 'Python', 'Django', 'FastAPI', 'Go', 'Rust', 'Java', 'C#', '.NET', 'Flask', 'SQLAlchemy',
  'Spring Boot', 'Spring', 'Maven', 'Gradle', 'Entity Framework Core', 'Kotlin', 'pnpm', 'Vite', 'GitHub Actions',
  'Amazon API Gateway', 'Amazon SQS', 'Amazon S3', 'Amazon EventBridge', 'AWS Step Functions', 'Kafka', 'RabbitMQ',
  'Nginx', 'Ruby', 'Ruby on Rails', 'PHP', 'Laravel', 'Swift', 'C++', 'Scala', 'Elixir', 'Azure', 'Google Cloud',
  'Prisma', 'Hibernate', 'NestJS', 'Redux', 'Helm', 'Terraform', 'CloudFormation', 'AWS CDK',
]);

/**
 * Families of alternatives: a language ecosystem, a database, a cloud. A question about
 * one member and a record about another of the same family (Blazor against React,
 * MySQL against PostgreSQL) are about different stacks; members of different families
 * (Node.js and PostgreSQL) are used together.
 */
const FAMILIES: Readonly<Record<string, readonly string[]>> = {
  'ecosystem:js': ['JavaScript', 'TypeScript', 'Node.js', 'Deno', 'Bun', 'React', 'Next.js', 'Vue', 'Angular', 'Svelte', 'Express', 'Fastify', 'NestJS', 'Redux', 'Prisma', 'Vitest', 'Jest', 'Testing Library', 'ESLint', 'Vite', 'Zod', 'npm', 'pnpm'],
  'ecosystem:python': ['Python', 'Django', 'FastAPI', 'Flask', 'SQLAlchemy', 'Pydantic', 'pytest', 'pip'],
  'ecosystem:jvm': ['Java', 'Kotlin', 'Scala', 'Spring', 'Spring Boot', 'JUnit', 'Maven', 'Gradle', 'Hibernate'],
  'ecosystem:dotnet': ['.NET', 'C#', 'Entity Framework Core', 'xUnit'],
  'ecosystem:go': ['Go'],
  'ecosystem:ruby': ['Ruby', 'Ruby on Rails'],
  'ecosystem:php': ['PHP', 'Laravel'],
  'ecosystem:rust': ['Rust'],
  'ecosystem:swift': ['Swift'],
  'ecosystem:cpp': ['C++'],
  'ecosystem:elixir': ['Elixir'],
  'database:postgresql': ['PostgreSQL'],
  'database:mysql': ['MySQL'],
  'database:sqlite': ['SQLite'],
  'database:redis': ['Redis'],
  'database:mongodb': ['MongoDB'],
  'database:dynamodb': ['DynamoDB'],
  'cloud:aws': ['AWS', 'AWS Lambda', 'Amazon SQS', 'Amazon S3', 'Amazon API Gateway', 'AWS IAM', 'AWS Secrets Manager', 'Amazon EventBridge', 'AWS Step Functions', 'CloudFormation', 'AWS CDK'],
  'cloud:azure': ['Azure'],
  'cloud:gcp': ['Google Cloud'],
};
const FAMILY_OF = new Map(Object.entries(FAMILIES).flatMap(([key, names]) => names.map((name) => [name, key] as const)));

/**
 * Whether a record is written for another stack than the question's: every technology
 * it declares belongs to a family (no standard or protocol that makes it portable),
 * and in some family the question names members and the record only others (a Blazor
 * question, a React record). A record that declares a standard beside its stack
 * (password hashing: OWASP, with a Node.js example) applies anywhere.
 */
export function writtenForAnotherStack(asked: readonly string[], declared: readonly string[]): boolean {
  const keys = (names: readonly string[]) => names.map((name) => FAMILY_OF.get(canonicalTechnology(name)));
  const theirs = keys(declared);
  if (theirs.length === 0 || theirs.some((key) => key === undefined)) return false;
  const mine = keys(asked).filter((key): key is string => key !== undefined);
  const family = (key: string) => key.slice(0, key.indexOf(':'));
  return mine.some((key) => {
    const same = theirs.filter((k) => family(k!) === family(key));
    return same.length > 0 && !same.includes(key) && !mine.some((m) => same.includes(m));
  });
}

/**
 * Names a question may use for a stack that are not technologies of their own in
 * the vocabulary: drivers, ORMs, libraries, servers and managed services, each mapped
 * to the technologies it implies (a driver to its database and language).
 */
export const IMPLIED_TECHNOLOGIES: Readonly<Record<string, readonly string[]>> = {
  'node-postgres': ['PostgreSQL', 'Node.js'], 'pg-pool': ['PostgreSQL', 'Node.js'], 'postgres.js': ['PostgreSQL', 'Node.js'],
  psycopg: ['PostgreSQL', 'Python'], psycopg2: ['PostgreSQL', 'Python'], psycopg3: ['PostgreSQL', 'Python'], asyncpg: ['PostgreSQL', 'Python'],
  pgx: ['PostgreSQL', 'Go'], 'lib/pq': ['PostgreSQL', 'Go'], npgsql: ['PostgreSQL', '.NET'], pgjdbc: ['PostgreSQL', 'Java'],
  pgbouncer: ['PostgreSQL'], 'rds proxy': ['PostgreSQL', 'AWS'], aurora: ['AWS'], rds: ['AWS'],
  mysql2: ['MySQL', 'Node.js'], pymysql: ['MySQL', 'Python'], mysqlclient: ['MySQL', 'Python'],
  typeorm: ['Node.js'], sequelize: ['Node.js'], knex: ['Node.js'], 'knex.js': ['Node.js'], drizzle: ['Node.js'], 'drizzle orm': ['Node.js'],
  mongoose: ['MongoDB', 'Node.js'], pymongo: ['MongoDB', 'Python'], ioredis: ['Redis', 'Node.js'], 'redis-py': ['Redis', 'Python'],
  jedis: ['Redis', 'Java'], lettuce: ['Redis', 'Java'], gorm: ['Go'], sqlx: [], jdbc: ['Java'], hikaricp: ['Java'], hikari: ['Java'],
  'spring data': ['Spring'], webflux: ['Spring', 'Java'], 'spring webflux': ['Spring', 'Java'], 'spring mvc': ['Spring', 'Java'],
  tomcat: ['Java'], jetty: ['Java'], netty: ['Java'], quarkus: ['Java'], micronaut: ['Java'], jackson: ['Java'], lombok: ['Java'],
  log4j: ['Java'], log4j2: ['Java'], logback: ['Java'], slf4j: ['Java'], okhttp: ['Java', 'HTTP'], resttemplate: ['Spring', 'HTTP'],
  webclient: ['Spring', 'HTTP'], mockito: ['Java'], testng: ['Java'], ktor: ['Kotlin'], kotlinx: ['Kotlin'],
  'asp.net core': ['.NET'], 'asp.net': ['.NET'], kestrel: ['.NET', 'HTTP'], blazor: ['.NET'], serilog: ['.NET'], nlog: ['.NET'],
  nunit: ['.NET'], moq: ['.NET'], polly: ['.NET'], 'ef core': ['Entity Framework Core', '.NET'], dapper: ['.NET'],
  axios: ['JavaScript', 'HTTP'], undici: ['Node.js', 'HTTP'], 'node-fetch': ['Node.js', 'HTTP'], superagent: ['JavaScript', 'HTTP'],
  koa: ['Node.js'], hapi: ['Node.js'], pino: ['Node.js'], winston: ['Node.js'], bunyan: ['Node.js'], pm2: ['Node.js'],
  'express-session': ['Express', 'Cookies'], helmet: ['Express', 'HTTP'], passport: ['Node.js'], 'passport.js': ['Node.js'],
  'next-auth': ['Next.js', 'OAuth'], nextauth: ['Next.js', 'OAuth'], mocha: ['JavaScript'], jasmine: ['JavaScript'],
  cypress: ['JavaScript'], puppeteer: ['JavaScript'], webpack: ['JavaScript'], babel: ['JavaScript'], jsdom: ['JavaScript'],
  'react native': ['React'], 'react-native': ['React'], 'react router': ['React'], 'react-router': ['React'], 'react query': ['React'],
  'tanstack query': ['React'], swr: ['React'], 'create-react-app': ['React'], remix: ['React'], nuxt: ['Vue'], pinia: ['Vue'],
  requests: ['Python', 'HTTP'], httpx: ['Python', 'HTTP'], aiohttp: ['Python', 'HTTP'], urllib3: ['Python', 'HTTP'],
  gunicorn: ['Python'], uvicorn: ['Python'], celery: ['Python'], asyncio: ['Python'], boto3: ['AWS', 'Python'], botocore: ['AWS', 'Python'],
  pandas: ['Python'], numpy: ['Python'], jupyter: ['Python'], poetry: ['Python'], pipenv: ['Python'], uv: [], conda: ['Python'],
  unittest: ['Python'], 'django rest framework': ['Django', 'Python'], drf: ['Django', 'Python'], starlette: ['Python'],
  gin: [], 'gin-gonic': ['Go'], 'gorilla/mux': ['Go'], logrus: ['Go'], zerolog: ['Go'], cobra: [], 'net/http': ['Go', 'HTTP'],
  'aws-sdk': ['AWS'], '@aws-sdk': ['AWS'], 'aws sdk': ['AWS'], cloudwatch: ['AWS'], sns: ['AWS'], kinesis: ['AWS'], ecs: ['AWS'],
  fargate: ['AWS'], ec2: ['AWS'], cognito: ['AWS'], 'elastic beanstalk': ['AWS'], eks: ['Kubernetes', 'AWS'], gke: ['Kubernetes', 'Google Cloud'],
  aks: ['Kubernetes', 'Azure'], kubectl: ['Kubernetes'], kubelet: ['Kubernetes'], minikube: ['Kubernetes'], openshift: ['Kubernetes'],
  istio: ['Kubernetes'], 'cloud run': ['Google Cloud'], 'cloud functions': ['Google Cloud'], 'azure functions': ['Azure'],
  'docker compose': ['Docker'], 'docker-compose': ['Docker'], podman: ['Docker'], testcontainers: ['Docker'],
  'gitlab ci': [], jenkins: [], circleci: [], vercel: [], netlify: [], heroku: [], 'cloudflare workers': [],
};

/**
 * Aliases too common as English words ("go", "rest", "next", "fetch", "spring") to
 * be read as a technology in free text, unless a version number follows them
 * ("go 1.22", "node 20"). A caller's `technologies` argument still accepts them.
 */
const AMBIGUOUS_IN_TEXT: ReadonlySet<string> = new Set([
  'go', 'rest', 'next', 'fetch', 'spring', 'cookie', 'cookies', 'lambda', 'ts', 'js', 'tf', 'ws', 'pg', 'py', 'bun', 'node',
  'vue', 'swift', 'dynamo', 'helm', 'git', 'http', 'https', 'html', 'css', 'sql', 'aria', 'jose', 'openid', 'ruby', 'rails',
  'express', 'jest', 'mcp', 'gha', 'cfn', 'iam', 's3', 'sqs', 'cdk', 'ror', 'cpp', 'ssl', 'tls', 'rtl', 'es6', 'ws', 'jvm',
  'requests', 'uv', 'gin', 'sqlx', 'cobra', 'passport', 'remix', 'babel', 'swr', 'poetry', 'aurora', 'rds', 'drf', 'sns', 'ecs',
]);

/** Lower-case, separators and spacing folded; keeps characters that change meaning (+, #). */
function fold(name: string): string {
  return name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\s_-]+/g, ' ')
    .trim();
}

const LOOKUP = new Map<string, string>();
for (const [canonical, aliases] of Object.entries(TECHNOLOGY_ALIASES)) {
  for (const alias of [canonical, ...aliases]) {
    LOOKUP.set(fold(alias), canonical);
    // "react.js" and "reactjs", "node js" and "nodejs": also index without dots and spaces.
    LOOKUP.set(fold(alias).replace(/[. ]/g, ''), canonical);
  }
}

export function canonicalTechnology(name: string): string {
  const folded = fold(name);
  return LOOKUP.get(folded) ?? LOOKUP.get(folded.replace(/[. ]/g, '')) ?? name.trim();
}

/** Canonical names, de-duplicated, in the caller's order. */
export function canonicalTechnologies(names: readonly string[]): string[] {
  return [...new Set(names.map(canonicalTechnology))];
}

/** Same technology, whatever the spelling. */
export function sameTechnology(a: string, b: string): boolean {
  return canonicalTechnology(a).toLowerCase() === canonicalTechnology(b).toLowerCase();
}

/** Whether the vocabulary knows the name, as a canonical name or an alias. */
export function isKnownTechnology(name: string): boolean {
  const folded = fold(name);
  return LOOKUP.has(folded) || LOOKUP.has(folded.replace(/[. ]/g, ''));
}

/** A technology the text names: where, as what, and what it implies. */
export interface NamedTechnology {
  /** The words as written. */
  readonly text: string;
  readonly index: number;
  /** Canonical technologies it names or implies (a driver: its database and language). */
  readonly technologies: readonly string[];
  /** The version written right after it ("node 20", "PostgreSQL v16.2"), if any. */
  readonly version?: string;
}

interface TextAlias {
  readonly alias: string;
  readonly technologies: readonly string[];
  readonly ambiguous: boolean;
}

/** Every surface form free text may use, longest first so "node.js" wins over "node". */
const TEXT_ALIASES: readonly TextAlias[] = (() => {
  const byAlias = new Map<string, TextAlias>();
  const add = (alias: string, technologies: readonly string[]) => {
    const key = alias.toLowerCase();
    if (!byAlias.has(key)) byAlias.set(key, { alias: key, technologies, ambiguous: AMBIGUOUS_IN_TEXT.has(key) });
  };
  for (const [canonical, aliases] of Object.entries(TECHNOLOGY_ALIASES)) for (const alias of [canonical, ...aliases]) add(alias, [canonical]);
  for (const [alias, implied] of Object.entries(IMPLIED_TECHNOLOGIES)) add(alias, implied);
  return [...byAlias.values()].sort((a, b) => b.alias.length - a.alias.length || a.alias.localeCompare(b.alias));
})();

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** One pass over the text: an alias between non-word characters, then an optional version. */
const TEXT_PATTERN = new RegExp(
  `(?<![\\p{L}\\p{N}_@./-])(${TEXT_ALIASES.map((a) => escapeRegExp(a.alias)).join('|')})(?![\\p{L}\\p{N}_]|[.-][\\p{L}\\p{N}])` +
    `(?:[ \\t]*v?(\\d+(?:\\.\\d+){0,2})(?![\\p{L}\\p{N}]|\\.\\d))?`,
  'giu',
);
const ALIAS_BY_TEXT = new Map(TEXT_ALIASES.map((a) => [a.alias, a]));

/**
 * The technologies free text names, with any version written after them. An
 * ambiguous alias ("go", "node", "next") counts only with a version ("go 1.22").
 */
export function technologiesInText(text: string): NamedTechnology[] {
  const found: NamedTechnology[] = [];
  for (const match of text.matchAll(TEXT_PATTERN)) {
    const alias = ALIAS_BY_TEXT.get(match[1]!.toLowerCase());
    const version = match[2];
    if (!alias || alias.technologies.length === 0 && !version) continue;
    if (alias.ambiguous && version === undefined) continue;
    found.push({ text: match[1]!, index: match.index, technologies: alias.technologies, version });
  }
  return found;
}

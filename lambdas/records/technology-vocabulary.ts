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
};

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

/**
 * The public front door: an API Gateway REST API with `/mcp` (POST, GET, DELETE) and
 * the OAuth endpoints (`OAUTH_ROUTES`) on the gateway function and the documentation files on the site function, one
 * stage (`v1`) with throttling, JSON access logs, X-Ray, JSON-RPC-shaped gateway
 * responses, and, when asked for, a WAF web ACL that limits each client IP.
 *
 * Why a REST API and not an HTTP API: a WAFv2 web ACL (and with it the per-IP
 * rate-based rule) can be associated with a REST API stage but not with an HTTP
 * API, and Lambda response streaming is offered for REST APIs only. The web ACL is
 * opt-in because it costs about USD 6 a month before the first request; without it
 * the stage throttling and the gateway's per-IP guest quota still apply.
 *
 * With `customDomain`, a regional custom domain maps the stage at its root, so
 * `https://<domain>/mcp` and the OAuth metadata at `https://<domain>/.well-known/…`
 * are served without the stage in the path (the gateway advertises URLs on the
 * host each request came in on, `lambdas/aws/api-gateway-adapter.ts`).
 *
 * There are no API keys, usage plans or authorizers here: the gateway function
 * authenticates bearer keys and counts quotas itself, the same way the local server
 * does. Access logs carry no query string, no headers and no body.
 */
import { Stack, Token, Validations } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as route53Targets from 'aws-cdk-lib/aws-route53-targets';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';

/** The documentation files the site function serves, as API paths. */
export const PUBLIC_DOC_PATHS = [
  '/llms.txt',
  '/llms-full.txt',
  '/docs.md',
  '/api.json',
  '/agent-instructions.md',
  '/mcp.json',
  '/sitemap.xml',
  '/robots.txt',
] as const;

/**
 * The OAuth endpoints the gateway function serves beside `/mcp` (`lambdas/oauth/oauth-routes.ts`),
 * with their methods. OPTIONS lets browser-based clients discover and exchange tokens.
 * They live under the stage like `/mcp`: the protected resource metadata is found
 * through the 401's `resource_metadata`. RFC 8414 discovery looks for the server
 * metadata at the host's root, which only a custom domain mapped to the stage
 * serves; connector clients need one (`customDomain`, context `chatctx:domainName`).
 */
export const OAUTH_ROUTES: Readonly<Record<string, readonly string[]>> = {
  '/.well-known/oauth-protected-resource': ['GET', 'OPTIONS'],
  '/.well-known/oauth-protected-resource/mcp': ['GET', 'OPTIONS'],
  '/.well-known/oauth-authorization-server': ['GET', 'OPTIONS'],
  '/oauth/authorize': ['GET', 'POST'],
  '/oauth/token': ['POST', 'OPTIONS'],
  '/oauth/register': ['POST', 'OPTIONS'],
};

/**
 * The HTTP methods of the MCP endpoint (Streamable HTTP transport), plus OPTIONS so
 * a browser client's CORS preflight reaches the gateway, which answers it for the
 * configured origins (ALLOWED_ORIGINS) exactly as the local server does.
 */
export const MCP_METHODS = ['POST', 'GET', 'DELETE', 'OPTIONS'] as const;

/**
 * The access log line: who (source IP), what (method and resource path, never the
 * raw path with its query string), the outcome and timings. Values are quoted so
 * that a missing value (`-`) still makes valid JSON.
 *
 * Finding a request's Lambda logs: `xrayTraceId` is the trace the gateway function
 * and the tool functions it invokes run in (the SDK passes the trace header on), and
 * the Powertools logger writes it into every line as `xray_trace_id`;
 * `integrationRequestId` is the gateway function's own request id.
 */
export const ACCESS_LOG_FIELDS: Readonly<Record<string, string>> = {
  requestId: apigateway.AccessLogField.contextRequestId(),
  xrayTraceId: apigateway.AccessLogField.contextXrayTraceId(),
  integrationRequestId: apigateway.AccessLogField.contextAwsEndpointRequestId(),
  ip: apigateway.AccessLogField.contextIdentitySourceIp(),
  httpMethod: apigateway.AccessLogField.contextHttpMethod(),
  resourcePath: apigateway.AccessLogField.contextResourcePath(),
  status: apigateway.AccessLogField.contextStatus(),
  responseLength: apigateway.AccessLogField.contextResponseLength(),
  integrationLatency: apigateway.AccessLogField.contextIntegrationLatency(),
  requestTime: apigateway.AccessLogField.contextRequestTime(),
};

export interface McpApiProps {
  /** The function behind `/mcp`. */
  readonly gatewayFunction: lambda.IFunction;

  /** The function behind the documentation files (`PUBLIC_DOC_PATHS`). */
  readonly siteFunction: lambda.IFunction;

  /**
   * The stage name; it is the first segment of every URL path.
   *
   * @default 'v1'
   */
  readonly stageName?: string;

  /**
   * Steady-state requests per second the stage accepts across all clients.
   *
   * @default 50
   */
  readonly throttlingRateLimit?: number;

  /**
   * Requests the stage accepts in a burst across all clients (at least the rate).
   *
   * @default 100
   */
  readonly throttlingBurstLimit?: number;

  /**
   * Whether to put a WAF web ACL with a per-IP rate-based rule on the stage (about
   * USD 6 a month plus USD 0.60 per million requests).
   *
   * @default false
   */
  readonly waf?: boolean;

  /**
   * Requests one client IP may make in any 5-minute window before WAF answers 429
   * (10–2,000,000,000). Used only with `waf`.
   *
   * @default 1000
   */
  readonly perIpRateLimit?: number;

  /**
   * Whether to create the role that lets API Gateway write logs to CloudWatch and
   * register it in the account's API Gateway settings (one per account and
   * region). Set to false when the account already has one.
   *
   * @default true
   */
  readonly cloudWatchRole?: boolean;

  /**
   * How long access and execution logs are kept.
   *
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;

  /**
   * A custom domain mapped at its root to the stage: what connector clients need,
   * since they look for the OAuth metadata at the host's root.
   *
   * @default - none: the API answers on its execute-api host name only
   */
  readonly customDomain?: McpApiCustomDomain;
}

/**
 * A custom domain for the API. The names match the context keys that set them
 * (`chatctx:domainName`, …), so an error message names the key to fix.
 */
export interface McpApiCustomDomain {
  /** The host name clients use, in lower case, e.g. `mcp.example.com`. */
  readonly domainName: string;

  /**
   * The ARN of an ACM certificate in the stack's region that covers `domainName`
   * (a regional custom domain takes its certificate from its own region).
   *
   * @default - a new certificate, validated by DNS in the hosted zone (which is then required)
   */
  readonly certificateArn?: string;

  /**
   * The id of the public Route 53 hosted zone `domainName` is in. With it (and
   * `hostedZoneName`) the stack creates alias A and AAAA records for the domain.
   *
   * @default - no DNS records: point the name at the domain's regional target yourself
   */
  readonly hostedZoneId?: string;

  /** The hosted zone's name, e.g. `example.com`; given with `hostedZoneId`. */
  readonly hostedZoneName?: string;
}

export class McpApi extends Construct {
  /** The REST API. */
  public readonly api: apigateway.RestApi;
  /** The deployed stage. */
  public readonly stage: apigateway.Stage;
  /** Where the access logs go. */
  public readonly accessLogGroup: logs.LogGroup;
  /** Where API Gateway writes its execution logs (errors only) for the stage. */
  public readonly executionLogGroup: logs.LogGroup;
  /** The web ACL guarding the stage, if `waf` is on. */
  public readonly webAcl?: wafv2.CfnWebACL;
  /** The MCP endpoint's URL (`https://…/v1/mcp`). */
  public readonly mcpUrl: string;
  /** The API's own host name, `<api id>.execute-api.<region>.<url suffix>`. */
  public readonly executeApiHost: string;
  /** The custom domain mapped at its root to the stage, if `customDomain` is set; its alias target is where DNS points. */
  public readonly customDomain?: apigateway.DomainName;
  /** The custom domain's host name as given (not a token, so the template and the Host allow-list read it). */
  public readonly customDomainName?: string;

  constructor(scope: Construct, id: string, props: McpApiProps) {
    super(scope, id);
    const stageName = props.stageName ?? 'v1';
    const throttlingRateLimit = props.throttlingRateLimit ?? 50;
    const throttlingBurstLimit = props.throttlingBurstLimit ?? 100;
    const perIpRateLimit = props.perIpRateLimit ?? 1000;
    const retention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;
    validate(stageName, throttlingRateLimit, throttlingBurstLimit, perIpRateLimit);

    this.accessLogGroup = new logs.LogGroup(this, 'AccessLogs', { retention });
    this.api = new apigateway.RestApi(this, 'Api', {
      // Named after the stack: API Gateway's metrics are keyed by the API's name, so two stacks in one region must not share one.
      restApiName: `${Stack.of(this).stackName}-api`,
      description: 'chatctx: MCP endpoint and public documentation files',
      endpointTypes: [apigateway.EndpointType.REGIONAL],
      cloudWatchRole: props.cloudWatchRole ?? true,
      deployOptions: {
        stageName,
        throttlingRateLimit,
        throttlingBurstLimit,
        tracingEnabled: true,
        accessLogDestination: new apigateway.LogGroupLogDestination(this.accessLogGroup),
        accessLogFormat: apigateway.AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
        // Execution logs for failures only, and never request or response data.
        loggingLevel: apigateway.MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        metricsEnabled: false,
      },
    });
    this.stage = this.api.deploymentStage;
    this.mcpUrl = `${this.api.url}mcp`;
    const { region, urlSuffix } = Stack.of(this);
    this.executeApiHost = `${this.api.restApiId}.execute-api.${region}.${urlSuffix}`;
    // The stack outputs the MCP URL itself; the API root URL it would add is not an endpoint.
    this.api.node.tryRemoveChild('Endpoint');

    // API Gateway would create this group itself, without retention; creating it
    // first (the stage depends on it) gives it one.
    this.executionLogGroup = new logs.LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/${stageName}`,
      retention,
    });
    this.stage.node.addDependency(this.executionLogGroup);

    const gateway = new apigateway.LambdaIntegration(props.gatewayFunction, { allowTestInvoke: false });
    const mcp = this.api.root.addResource('mcp');
    for (const method of MCP_METHODS) mcp.addMethod(method, gateway);
    for (const [path, methods] of Object.entries(OAUTH_ROUTES)) {
      const resource = this.api.root.resourceForPath(path);
      for (const method of methods) resource.addMethod(method, gateway);
    }

    const site = new apigateway.LambdaIntegration(props.siteFunction, { allowTestInvoke: false });
    for (const path of PUBLIC_DOC_PATHS) this.api.root.addResource(path.slice(1)).addMethod('GET', site);

    addJsonRpcGatewayResponses(this.api);

    const waf = props.waf ?? false;
    if (waf) {
      this.webAcl = this.perIpRateLimitAcl(perIpRateLimit);
      const association = new wafv2.CfnWebACLAssociation(this, 'WebAclAssociation', {
        resourceArn: this.stage.stageArn,
        webAclArn: this.webAcl.attrArn,
      });
      // The stage ARN is built from names, so CloudFormation would not order these by itself.
      association.node.addDependency(this.stage);
    }

    this.customDomain = props.customDomain && this.mapCustomDomain(props.customDomain);
    this.customDomainName = props.customDomain?.domainName;
    this.acknowledgeNagFindings(props.cloudWatchRole ?? true, waf);
  }

  /** The MCP URL clients should use: on the custom domain (no stage in the path) if there is one, else `mcpUrl`. */
  public get publicMcpUrl(): string {
    return this.customDomainName === undefined ? this.mcpUrl : `https://${this.customDomainName}/mcp`;
  }

  /**
   * A regional custom domain (TLS 1.2 at least, IPv4 and IPv6) with the stage
   * mapped at its root, and, with a hosted zone, the certificate when none is
   * given and the alias records. The root and not a base path: RFC 8414 discovery
   * looks at the host's root, and API Gateway would pass a base path on in each
   * event's `path`, where the gateway's routes would no longer match.
   */
  private mapCustomDomain(domain: McpApiCustomDomain): apigateway.DomainName {
    validateCustomDomain(domain, Stack.of(this).region);
    // By id and name, without a lookup, so the stack still synthesizes offline and without credentials.
    const zone =
      domain.hostedZoneId && domain.hostedZoneName
        ? route53.HostedZone.fromHostedZoneAttributes(this, 'HostedZone', { hostedZoneId: domain.hostedZoneId, zoneName: zoneNameOf(domain.hostedZoneName) })
        : undefined;
    const certificate = domain.certificateArn
      ? acm.Certificate.fromCertificateArn(this, 'Certificate', domain.certificateArn)
      : new acm.Certificate(this, 'Certificate', { domainName: domain.domainName, validation: acm.CertificateValidation.fromDns(zone) });
    const customDomain = new apigateway.DomainName(this, 'CustomDomain', {
      domainName: domain.domainName,
      certificate,
      endpointType: apigateway.EndpointType.REGIONAL,
      securityPolicy: apigateway.SecurityPolicy.TLS_1_2,
    });
    // The L2 construct has no IP address type; dualstack gives the AAAA record something to point at.
    (customDomain.node.defaultChild as apigateway.CfnDomainName).addPropertyOverride('EndpointConfiguration.IpAddressType', 'dualstack');
    customDomain.addBasePathMapping(this.api, { stage: this.stage });
    if (zone) {
      const target = route53.RecordTarget.fromAlias(new route53Targets.ApiGatewayDomain(customDomain));
      new route53.ARecord(this, 'CustomDomainAlias', { zone, recordName: domain.domainName, target });
      new route53.AaaaRecord(this, 'CustomDomainAliasIpv6', { zone, recordName: domain.domainName, target });
    }
    return customDomain;
  }

  /** A WAF web ACL that answers 429 (JSON-RPC body, Retry-After) to an IP over its request budget. */
  private perIpRateLimitAcl(perIpRateLimit: number): wafv2.CfnWebACL {
    return new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      description: 'chatctx API: per-IP rate limit',
      defaultAction: { allow: {} },
      customResponseBodies: {
        [RATE_LIMITED_BODY_KEY]: { contentType: 'APPLICATION_JSON', content: jsonRpcError(RATE_LIMITED_MESSAGE) },
      },
      // Sampled requests would show request headers, bearer keys included, in the
      // WAF console; metrics are enough.
      visibilityConfig: { cloudWatchMetricsEnabled: true, metricName: 'chatctx-api', sampledRequestsEnabled: false },
      rules: [
        {
          name: 'per-ip-rate-limit',
          priority: 0,
          action: {
            block: {
              customResponse: {
                responseCode: 429,
                customResponseBodyKey: RATE_LIMITED_BODY_KEY,
                // The rule counts over 5 minutes and re-evaluates about every minute.
                responseHeaders: [{ name: 'Retry-After', value: '60' }],
              },
            },
          },
          statement: {
            rateBasedStatement: { limit: perIpRateLimit, aggregateKeyType: 'IP', evaluationWindowSec: 300 },
          },
          visibilityConfig: {
            cloudWatchMetricsEnabled: true,
            metricName: 'chatctx-per-ip-rate-limit',
            sampledRequestsEnabled: false,
          },
        },
      ],
    });
  }

  /** The cdk-nag findings this API accepts, each with its reason. */
  private acknowledgeNagFindings(cloudWatchRole: boolean, waf: boolean): void {
    if (!waf) {
      Validations.of(this.stage).acknowledge({
        id: 'AwsSolutions::AwsSolutions-APIG3',
        reason:
          'The WAF web ACL is opt-in (context chatctx:waf) because it costs about USD 6 a month before any request. ' +
          'Without it the stage throttles all clients together and the gateway function limits each guest IP per day.',
      });
    }
    Validations.of(this.api).acknowledge(
      {
        id: 'AwsSolutions::AwsSolutions-APIG2',
        reason:
          'Requests are validated by the gateway function against the zod schemas the whole service derives from, and ' +
          'errors must come back in the MCP/JSON-RPC shapes the contract defines; an API Gateway model would duplicate ' +
          'the schemas and answer in its own format.',
      },
      {
        id: 'AwsSolutions::AwsSolutions-APIG4',
        reason:
          'Authorization is in the gateway function: bearer API keys checked against their HMAC, guests limited per IP, ' +
          'as the MCP contract requires (keyless guest access is part of it). The documentation files are public.',
      },
      {
        id: 'AwsSolutions::AwsSolutions-COG4',
        reason: 'There are no Cognito users: callers are agents with bearer API keys or guests, checked in the gateway function.',
      },
    );
    if (cloudWatchRole) {
      Validations.of(this.api).acknowledge({
        id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          "API Gateway's account-level logging role, with the managed policy AWS documents for it; it serves every API " +
          'of the account and region, so it cannot be scoped to this stack’s log groups.',
      });
    }
  }
}

/** The WAF rule's response body key. */
const RATE_LIMITED_BODY_KEY = 'rate-limited';
const RATE_LIMITED_MESSAGE = 'Too many requests from this address; retry after the Retry-After seconds.';

/** A JSON-RPC 2.0 error response without an id (API Gateway cannot know the request's). */
function jsonRpcError(message: string, data?: string): string {
  const dataPart = data === undefined ? '' : `,"data":${data}`;
  return `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":${JSON.stringify(message)}${dataPart}}}`;
}

interface GatewayResponseSpec {
  readonly type: apigateway.ResponseType;
  readonly message: string;
  /** The status to answer with, if not API Gateway's own for this type. */
  readonly statusCode?: string;
  /** Seconds a client should wait before trying again. */
  readonly retryAfter?: number;
}

/**
 * What API Gateway answers when the request never reaches (or never hears back
 * from) the gateway function. MCP clients parse JSON-RPC, so these answers are
 * JSON-RPC errors too, with API Gateway's request id in `error.data` (the access
 * log's `requestId`), and `Retry-After` where waiting helps.
 */
export const GATEWAY_RESPONSES: readonly GatewayResponseSpec[] = [
  { type: apigateway.ResponseType.DEFAULT_4XX, message: 'The request was rejected before it reached the MCP server.' },
  { type: apigateway.ResponseType.DEFAULT_5XX, message: 'The MCP server is unavailable; try again.', retryAfter: 5 },
  // API Gateway answers an unknown path with 403 "Missing Authentication Token"; it is a 404.
  { type: apigateway.ResponseType.MISSING_AUTHENTICATION_TOKEN, message: 'No such path. The MCP endpoint is /mcp under the stage.', statusCode: '404' },
  { type: apigateway.ResponseType.THROTTLED, message: 'The service is busy; retry after the Retry-After seconds.', retryAfter: 1 },
  { type: apigateway.ResponseType.QUOTA_EXCEEDED, message: 'Quota exceeded; retry after the Retry-After seconds.', retryAfter: 60 },
  { type: apigateway.ResponseType.WAF_FILTERED, message: 'The request was blocked by the web application firewall.' },
  { type: apigateway.ResponseType.INTEGRATION_TIMEOUT, message: 'The MCP server did not answer in time; try again.', retryAfter: 5 },
  { type: apigateway.ResponseType.INTEGRATION_FAILURE, message: 'The MCP server failed to answer; try again.', retryAfter: 5 },
];

function addJsonRpcGatewayResponses(api: apigateway.RestApi): void {
  for (const spec of GATEWAY_RESPONSES) {
    api.addGatewayResponse(`${spec.type.responseType}Response`, {
      type: spec.type,
      statusCode: spec.statusCode,
      responseHeaders: spec.retryAfter === undefined ? undefined : { 'Retry-After': `'${spec.retryAfter}'` },
      templates: { 'application/json': jsonRpcError(spec.message, '{"request_id":"$context.requestId"}') },
    });
  }
}

function validate(stageName: string, rate: number, burst: number, perIpRateLimit: number): void {
  if (!/^[a-zA-Z0-9_]{1,128}$/.test(stageName)) {
    throw new Error(`stageName may contain only letters, digits and underscores, got "${stageName}"`);
  }
  if (!(rate > 0)) throw new Error(`throttlingRateLimit must be positive, got ${rate}`);
  if (!Number.isInteger(burst) || burst < rate) {
    throw new Error(`throttlingBurstLimit must be a whole number of at least throttlingRateLimit (${rate}), got ${burst}`);
  }
  if (!Number.isInteger(perIpRateLimit) || perIpRateLimit < 10 || perIpRateLimit > 2_000_000_000) {
    throw new Error(`perIpRateLimit must be a whole number between 10 and 2,000,000,000, got ${perIpRateLimit}`);
  }
}

/** An ACM certificate's ARN, in any partition. */
const ACM_CERTIFICATE_ARN = /^arn:aws(-[a-z]+)*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]+$/;
/** A Route 53 hosted zone id, without the `/hostedzone/` prefix. */
const HOSTED_ZONE_ID = /^[A-Z0-9]{1,32}$/;

/** A lower-case DNS name of at least two labels (API Gateway refuses upper case; a `*` would not be one host). */
function isDomainName(name: string): boolean {
  const labels = name.split('.');
  return name.length <= 253 && labels.length >= 2 && labels.every((label) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(label));
}

/** A hosted zone's name as Route 53 shows it (`example.com.`) or without the final dot. */
function zoneNameOf(hostedZoneName: string): string {
  return hostedZoneName.endsWith('.') ? hostedZoneName.slice(0, -1) : hostedZoneName;
}

/**
 * The custom domain settings, checked together so a deploy does not fail halfway
 * on one of them. `region` is the stack's, a token unless the stack names one.
 */
function validateCustomDomain(domain: McpApiCustomDomain, region: string): void {
  const { domainName, certificateArn, hostedZoneId, hostedZoneName } = domain;
  if (!isDomainName(domainName)) {
    throw new Error(`domainName must be a lower-case host name like mcp.example.com (no scheme, port, path or "*"), got "${domainName}"`);
  }
  if (certificateArn !== undefined && !ACM_CERTIFICATE_ARN.test(certificateArn)) {
    throw new Error(`certificateArn must be an ACM certificate ARN (arn:aws:acm:<region>:<account>:certificate/<id>), got "${certificateArn}"`);
  }
  const certificateRegion = certificateArn?.split(':')[3];
  if (certificateRegion !== undefined && !Token.isUnresolved(region) && certificateRegion !== region) {
    throw new Error(`certificateArn must be in the stack's region (${region}) for a regional custom domain, got one in ${certificateRegion}`);
  }
  if ((hostedZoneId === undefined) !== (hostedZoneName === undefined)) {
    throw new Error('hostedZoneId and hostedZoneName go together: give both or neither');
  }
  if (hostedZoneId === undefined || hostedZoneName === undefined) {
    if (certificateArn === undefined) {
      throw new Error(
        `domainName ${domainName} needs certificateArn (an ACM certificate in the stack's region that covers it) ` +
          'or hostedZoneId and hostedZoneName (the public hosted zone to validate a new certificate in)',
      );
    }
    return;
  }
  if (!HOSTED_ZONE_ID.test(hostedZoneId)) throw new Error(`hostedZoneId must be a Route 53 hosted zone id like Z0123456789ABCDEFGHIJ, got "${hostedZoneId}"`);
  const zoneName = zoneNameOf(hostedZoneName);
  if (!isDomainName(zoneName)) throw new Error(`hostedZoneName must be a lower-case zone name like example.com, got "${hostedZoneName}"`);
  if (domainName !== zoneName && !domainName.endsWith(`.${zoneName}`)) {
    throw new Error(`domainName ${domainName} is not in the hosted zone ${zoneName} (hostedZoneName)`);
  }
}

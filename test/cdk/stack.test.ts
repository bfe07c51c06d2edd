/**
 * The synthesized CloudFormation of the chatctx stack: every resource the
 * deployment relies on, the settings a user would notice (capacity, limits, log
 * retention, URLs) and, above all, what each function's role may and may not do.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ChatctxStack } from '../../lib/chatctx-stack.ts';
import { DATABASE_ROLES } from '../../lib/database.ts';
import { MCP_METHODS, OAUTH_ROUTES, PUBLIC_DOC_PATHS } from '../../lib/mcp-api.ts';
import { schemaHash } from '../../lib/migrations.ts';
import { OAUTH_CONNECTOR_CALLBACKS, SETTINGS } from '../../lambdas/config/settings.ts';
import { grantsOfRole, permissionsOfRole, resourceKey } from './iam-statements.ts';
import { buildApp, synthTemplate } from './synth-app.ts';

let stack: ChatctxStack;
let template: Template;

beforeAll(() => {
  ({ stack, template } = synthTemplate());
});

/** The logical id of a construct's CloudFormation resource. */
const logicalId = (construct: IConstruct) =>
  stack.getLogicalId(construct instanceof CfnElement ? construct : (construct.node.defaultChild as CfnElement));
/** A token as the template spells it, stringified like the IAM helper's resources. */
const cfn = (value: unknown) => resourceKey(stack.resolve(value));

const FUNCTION_NAMES = ['gateway', 'searchKnowledge', 'getGuidance', 'submitFeedback', 'admin', 'migrate', 'site', 'sourceChecks'] as const;
type FunctionName = (typeof FUNCTION_NAMES)[number];
const fn = (name: FunctionName) => stack.functions[name];
const roleId = (name: FunctionName) => logicalId(fn(name).role);

describe('database', () => {
  it('is Aurora PostgreSQL 16.8 Serverless v2 with the Data API, encrypted, auto-pausing by default', () => {
    template.resourceCountIs('AWS::RDS::DBCluster', 1);
    template.hasResource('AWS::RDS::DBCluster', {
      Properties: {
        Engine: 'aurora-postgresql',
        EngineVersion: '16.8',
        ServerlessV2ScalingConfiguration: { MinCapacity: 0, MaxCapacity: 4 },
        EnableHttpEndpoint: true,
        StorageEncrypted: true,
        BackupRetentionPeriod: 7,
        DeletionProtection: false,
        DatabaseName: 'chatctx',
        MasterUsername: 'chatctx_admin',
      },
      DeletionPolicy: 'Snapshot',
      UpdateReplacePolicy: 'Snapshot',
    });
    template.hasResourceProperties('AWS::RDS::DBCluster', { IamDatabaseAuthenticationEnabled: Match.absent() });
  });

  it('has one serverless v2 writer that is not publicly accessible', () => {
    template.resourceCountIs('AWS::RDS::DBInstance', 1);
    template.hasResourceProperties('AWS::RDS::DBInstance', {
      DBInstanceClass: 'db.serverless',
      Engine: 'aurora-postgresql',
      PubliclyAccessible: false,
    });
  });

  it('sits in a VPC with isolated subnets only: no NAT, no internet gateway, no routes out', () => {
    template.resourceCountIs('AWS::EC2::VPC', 1);
    template.resourceCountIs('AWS::EC2::NatGateway', 0);
    template.resourceCountIs('AWS::EC2::InternetGateway', 0);
    template.resourceCountIs('AWS::EC2::Route', 0);
    template.resourceCountIs('AWS::EC2::Subnet', 2);
    template.allResourcesProperties('AWS::EC2::Subnet', { MapPublicIpOnLaunch: false });
    template.hasResourceProperties('AWS::EC2::FlowLog', { ResourceType: 'VPC', TrafficType: 'ALL' });
  });

  const roleSecretUsers = (t: Template) =>
    Object.values(t.findResources('AWS::SecretsManager::Secret'))
      .map((secret) => secret.Properties.GenerateSecretString?.SecretStringTemplate as string | undefined)
      .map((json) => (json ? (JSON.parse(json) as { username?: string }).username : undefined))
      .filter((user): user is string => user !== undefined)
      .sort();

  it('has by default three secrets: the master user, the gateway role, and the role shared by the tools and the source check, which also holds the pepper', () => {
    expect(roleSecretUsers(template)).toEqual(['chatctx_admin', 'chatctx_gateway', 'chatctx_runtime']);
    // The tool role's secret is generated holding the pepper; migrate writes the role's password beside it.
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: { SecretStringTemplate: Match.serializedJson(Match.objectLike({ username: 'chatctx_runtime' })), GenerateStringKey: 'pepper' },
    });
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: { SecretStringTemplate: Match.serializedJson(Match.objectLike({ username: 'chatctx_gateway' })), GenerateStringKey: 'password' },
    });
    template.resourceCountIs('AWS::SecretsManager::Secret', 3);
    template.resourceCountIs('AWS::SecretsManager::SecretTargetAttachment', 3);
    template.allResourcesProperties('AWS::SecretsManager::SecretTargetAttachment', {
      TargetType: 'AWS::RDS::DBCluster',
      TargetId: { Ref: logicalId(stack.database.cluster) },
    });
  });

  it('has one role and secret per tool function with chatctx:perFunctionRoles, and keeps the runtime secret (same id) for the pepper alone: seven secrets in all', () => {
    const { template: perFunction, stack: perFunctionStack } = synthTemplate({ 'chatctx:perFunctionRoles': 'true' });
    expect(roleSecretUsers(perFunction)).toEqual(['chatctx_admin', 'chatctx_feedback', 'chatctx_gateway', 'chatctx_reader', 'chatctx_runtime', 'chatctx_search', 'chatctx_verifier']);
    perFunction.resourceCountIs('AWS::SecretsManager::Secret', 7);
    // The runtime secret is no login there: not attached to the cluster.
    perFunction.resourceCountIs('AWS::SecretsManager::SecretTargetAttachment', 6);
    // Switching layouts keeps the pepper: the secret's logical id is the same in both.
    expect(perFunctionStack.getLogicalId(perFunctionStack.database.runtimeSecret.node.defaultChild as CfnElement)).toBe(logicalId(stack.database.runtimeSecret));
    expect(() => buildApp({ 'chatctx:perFunctionRoles': 'yes' })).toThrow(/chatctx:perFunctionRoles must be true or false/);
  });

  it('takes capacity and deletion protection from the context, given as -c strings', () => {
    const { template: custom } = synthTemplate({
      'chatctx:minCapacity': '0.5',
      'chatctx:maxCapacity': '8',
      'chatctx:deletionProtection': 'true',
    });
    custom.hasResourceProperties('AWS::RDS::DBCluster', {
      ServerlessV2ScalingConfiguration: { MinCapacity: 0.5, MaxCapacity: 8 },
      DeletionProtection: true,
    });
  });

  it('refuses impossible capacity settings at synth', () => {
    expect(() => buildApp({ 'chatctx:minCapacity': 0.3 })).toThrow(/minCapacity must be 0–256 ACU in steps of 0.5/);
    expect(() => buildApp({ 'chatctx:minCapacity': 4, 'chatctx:maxCapacity': 2 })).toThrow(/maxCapacity \(2\) must be at least minCapacity \(4\)/);
    expect(() => buildApp({ 'chatctx:maxCapacity': 'four' })).toThrow(/context chatctx:maxCapacity must be a number/);
    expect(() => buildApp({ 'chatctx:deletionProtection': 'yes' })).toThrow(/must be true or false/);
  });
});

describe('migrations custom resource', () => {
  it('runs migrate with a hash of schema/*.sql and the layout\'s roles, after the writer instance exists', () => {
    const writer = stack.database.cluster.node.findChild('writer');
    template.hasResource('Custom::ChatctxMigrations', {
      Properties: {
        ServiceToken: { 'Fn::GetAtt': [Match.stringLikeRegexp('^MigrationsProviderframeworkonEvent'), 'Arn'] },
        SchemaHash: schemaHash(),
        Roles: ['chatctx_runtime', 'chatctx_gateway'],
        RoleSecretArns: (['runtime', 'gateway'] as const).map((purpose) => stack.resolve(stack.database.roleSecret(purpose).secretArn)),
      },
      DependsOn: Match.arrayWith([logicalId(writer)]),
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'framework.onEvent',
      Environment: { Variables: { USER_ON_EVENT_FUNCTION_ARN: { 'Fn::GetAtt': [logicalId(fn('migrate').function), 'Arn'] } } },
    });
  });

  it('runs before the functions that log in as a database role are created or changed', () => {
    const migrationsId = logicalId(stack.migrations.resource);
    for (const name of ['gateway', 'searchKnowledge', 'getGuidance', 'submitFeedback', 'sourceChecks'] as const) {
      expect(template.toJSON().Resources[logicalId(fn(name).function)].DependsOn, name).toContain(migrationsId);
    }
  });

  it('runs again on a replaced cluster: its properties name the cluster and the database', () => {
    template.hasResourceProperties('Custom::ChatctxMigrations', {
      ClusterArn: stack.resolve(stack.database.cluster.clusterArn),
      DatabaseName: 'chatctx',
    });
    expect(JSON.stringify(stack.resolve(stack.database.cluster.clusterArn))).toContain(logicalId(stack.database.cluster));
    const { template: perFunction } = synthTemplate({ 'chatctx:perFunctionRoles': true });
    perFunction.hasResourceProperties('Custom::ChatctxMigrations', { Roles: ['chatctx_search', 'chatctx_reader', 'chatctx_feedback', 'chatctx_gateway', 'chatctx_verifier'] });
  });

  it('changes its trigger exactly when a migration file changes (no timestamps)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatctx-schema-'));
    writeFileSync(join(dir, '001_initial.sql'), 'CREATE TABLE a (id int);');
    writeFileSync(join(dir, 'README.md'), 'not a migration');
    const first = schemaHash(dir);
    expect(schemaHash(dir)).toBe(first);
    writeFileSync(join(dir, 'README.md'), 'still not a migration');
    expect(schemaHash(dir)).toBe(first);
    writeFileSync(join(dir, '002_more.sql'), 'ALTER TABLE a ADD COLUMN b int;');
    expect(schemaHash(dir)).not.toBe(first);
  });
});

describe('quota table', () => {
  it('is keyed by pk, on demand, with TTL on expires_at, PITR and AWS-managed encryption', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      BillingMode: 'PAY_PER_REQUEST',
      TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true, KMSMasterKeyId: Match.absent() },
    });
  });
});

describe('pepper', () => {
  it('is generated by Secrets Manager as 64 alphanumerics under "pepper" in the tool role\'s secret, kept on removal, never rotated', () => {
    template.hasResource('AWS::SecretsManager::Secret', {
      Properties: {
        GenerateSecretString: {
          SecretStringTemplate: JSON.stringify({ username: 'chatctx_runtime', dbname: 'chatctx' }),
          GenerateStringKey: 'pepper',
          PasswordLength: 64,
          ExcludePunctuation: true,
        },
      },
      DeletionPolicy: 'Retain',
    });
    expect(stack.resolve(stack.pepper.secret.secretArn)).toEqual(stack.resolve(stack.database.roleSecret('runtime').secretArn));
    template.resourceCountIs('AWS::SecretsManager::RotationSchedule', 0);
  });

  it('is checked by migrate, which runs again when the pepper secret changes and may write only the tool role\'s password', () => {
    template.hasResourceProperties('Custom::ChatctxMigrations', { PepperSecretArn: stack.resolve(stack.pepper.secret.secretArn) });
    const migrate = template.toJSON().Resources[logicalId(fn('migrate').function)].Properties.Environment.Variables;
    expect(migrate.CHATCTX_PEPPER_SECRET_ARN).toEqual(stack.resolve(stack.pepper.secret.secretArn));
    expect(migrate.CHATCTX_PEPPER_ADOPTED).toBe('0');
    const writers = Object.values(template.findResources('AWS::IAM::Policy')).flatMap((p) =>
      (p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[])
        .filter((st) => [st.Action].flat().includes('secretsmanager:PutSecretValue'))
        .map((st) => ({ roles: p.Properties.Roles, resource: st.Resource })),
    );
    expect(writers).toEqual([{ roles: [{ Ref: logicalId(fn('migrate').role) }], resource: { Ref: logicalId(stack.database.runtimeSecret) } }]);
  });

  it('is adopted from chatctx:pepperSecretArn instead, so a restored database keeps its keys: every reader, and migrate\'s check, pointed at it', () => {
    const arn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:chatctx-pepper-AbC123';
    const { template: adopted, stack: adopting } = synthTemplate({ 'chatctx:pepperSecretArn': arn });
    expect(adopting.resolve(adopting.pepper.secret.secretArn)).toBe(arn);
    for (const name of ['gateway', 'searchKnowledge', 'admin', 'migrate'] as const) {
      const id = adopting.getLogicalId(adopting.functions[name].function.node.defaultChild as CfnElement);
      expect(adopted.toJSON().Resources[id].Properties.Environment.Variables.CHATCTX_PEPPER_SECRET_ARN, name).toBe(arn);
    }
    const migrateId = adopting.getLogicalId(adopting.functions.migrate.function.node.defaultChild as CfnElement);
    expect(adopted.toJSON().Resources[migrateId].Properties.Environment.Variables.CHATCTX_PEPPER_ADOPTED).toBe('1');
    adopted.hasResourceProperties('Custom::ChatctxMigrations', { PepperSecretArn: arn });
    // A deliberate replacement is one explicit context value, passed to migrate only.
    const { template: replacing, stack: replacer } = synthTemplate({ 'chatctx:pepperSecretArn': arn, 'chatctx:replacePepper': 'true' });
    const replacerMigrate = replacer.getLogicalId(replacer.functions.migrate.function.node.defaultChild as CfnElement);
    expect(replacing.toJSON().Resources[replacerMigrate].Properties.Environment.Variables.CHATCTX_PEPPER_REPLACE).toBe('1');
    expect(JSON.stringify(adopted.findResources('AWS::IAM::Policy'))).toContain(arn);
    expect(() => buildApp({ 'chatctx:pepperSecretArn': 'chatctx-pepper' })).toThrow(/pepperSecretArn must be a secret's complete ARN/);
  });
});

describe('REST API', () => {
  /** The resource at `path` under the stage's root, e.g. `/mcp` or `/.well-known/oauth-protected-resource/mcp`. */
  const resourceIdOf = (path: string): string => {
    const parts = path.replace(/^\//, '').split('/');
    const last = parts.pop()!;
    const parent = parts.length === 0 ? undefined : resourceIdOf(parts.join('/'));
    const found = Object.entries(template.findResources('AWS::ApiGateway::Resource', { Properties: { PathPart: last } })).filter(([, r]) =>
      parent === undefined ? 'Fn::GetAtt' in r.Properties.ParentId : r.Properties.ParentId.Ref === parent,
    );
    expect(found.map(([id]) => id), `resource /${path}`).toHaveLength(1);
    return found[0]![0];
  };
  const oauthMethodCount = Object.values(OAUTH_ROUTES).flat().length;
  // The gateway is invoked through its `live` alias (the version this deploy published), the site function directly.
  const invokedArn = (name: 'gateway' | 'site') => (name === 'gateway' ? stack.resolve(stack.functions.gatewayAlias.functionArn) : { 'Fn::GetAtt': [logicalId(fn(name).function), 'Arn'] });
  const proxyTo = (name: 'gateway' | 'site') => ({
    Type: 'AWS_PROXY',
    IntegrationHttpMethod: 'POST',
    Uri: { 'Fn::Join': ['', Match.arrayWith([invokedArn(name), '/invocations'])] },
  });

  it('is a regional REST API', () => {
    template.resourceCountIs('AWS::ApiGateway::RestApi', 1);
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { EndpointConfiguration: { Types: ['REGIONAL'] } });
  });

  it('routes POST, GET, DELETE and OPTIONS (CORS preflight) /mcp to the gateway function, and nothing else', () => {
    const mcp = resourceIdOf('mcp');
    const methods = template.findResources('AWS::ApiGateway::Method', { Properties: { ResourceId: { Ref: mcp } } });
    expect(Object.values(methods).map((m) => m.Properties.HttpMethod).sort()).toEqual(['DELETE', 'GET', 'OPTIONS', 'POST']);
    for (const method of ['POST', 'GET', 'DELETE', 'OPTIONS']) {
      template.hasResourceProperties('AWS::ApiGateway::Method', {
        ResourceId: { Ref: mcp },
        HttpMethod: method,
        AuthorizationType: 'NONE',
        ApiKeyRequired: Match.absent(),
        Integration: proxyTo('gateway'),
      });
    }
  });

  it('serves each documentation file with GET from the site function', () => {
    for (const path of PUBLIC_DOC_PATHS) {
      template.hasResourceProperties('AWS::ApiGateway::Method', {
        ResourceId: { Ref: resourceIdOf(path.slice(1)) },
        HttpMethod: 'GET',
        Integration: proxyTo('site'),
      });
    }
    template.resourceCountIs('AWS::ApiGateway::Method', MCP_METHODS.length + PUBLIC_DOC_PATHS.length + oauthMethodCount);
  });

  it('routes the OAuth endpoints, with exactly their methods, to the gateway function', () => {
    for (const [path, methods] of Object.entries(OAUTH_ROUTES)) {
      const id = resourceIdOf(path);
      const found = template.findResources('AWS::ApiGateway::Method', { Properties: { ResourceId: { Ref: id } } });
      expect(Object.values(found).map((m) => m.Properties.HttpMethod).sort(), path).toEqual([...methods].sort());
      for (const method of methods) {
        template.hasResourceProperties('AWS::ApiGateway::Method', { ResourceId: { Ref: id }, HttpMethod: method, AuthorizationType: 'NONE', Integration: proxyTo('gateway') });
      }
    }
  });

  it('is named after its stack, so two stacks in one region keep their API metrics apart', () => {
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { Name: `${stack.stackName}-api` });
    const { template: other } = synthTemplate({ 'chatctx:stackName': 'ChatctxStaging' });
    other.hasResourceProperties('AWS::ApiGateway::RestApi', { Name: 'ChatctxStaging-api' });
  });

  it('lets API Gateway invoke only the gateway and site functions, per method, without test invokes', () => {
    const permissions = Object.values(template.findResources('AWS::Lambda::Permission')).filter((p) => p.Properties.Principal !== 'events.amazonaws.com');
    const targets = new Set(permissions.map((p) => resourceKey(p.Properties.FunctionName)));
    expect(targets).toEqual(new Set([cfn(stack.functions.gatewayAlias.functionArn), cfn(fn('site').function.functionArn)]));
    expect(permissions).toHaveLength(MCP_METHODS.length + PUBLIC_DOC_PATHS.length + oauthMethodCount);
    for (const permission of permissions) {
      expect(permission.Properties.Principal).toBe('apigateway.amazonaws.com');
      expect(JSON.stringify(permission.Properties.SourceArn)).not.toContain('test-invoke-stage');
    }
  });

  it('deploys stage v1 with throttling, X-Ray and error-only execution logs without data', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'v1',
      TracingEnabled: true,
      MethodSettings: [
        Match.objectLike({
          HttpMethod: '*',
          ResourcePath: '/*',
          ThrottlingRateLimit: 50,
          ThrottlingBurstLimit: 100,
          LoggingLevel: 'ERROR',
          DataTraceEnabled: false,
        }),
      ],
    });
    template.hasResourceProperties('AWS::Logs::LogGroup', {
      LogGroupName: { 'Fn::Join': ['', ['API-Gateway-Execution-Logs_', { Ref: logicalId(stack.api.api) }, '/v1']] },
      RetentionInDays: 30,
    });
  });

  it('writes JSON access logs with the caller IP and outcome, but no query string, headers or body', () => {
    const stage = Object.values(template.findResources('AWS::ApiGateway::Stage'))[0]!;
    const setting = stage.Properties.AccessLogSetting as { Format: string; DestinationArn: unknown };
    expect(JSON.stringify(setting.DestinationArn)).toContain(logicalId(stack.api.accessLogGroup));
    const format = JSON.parse(setting.Format) as Record<string, string>;
    expect(format).toEqual({
      requestId: '$context.requestId',
      xrayTraceId: '$context.xrayTraceId',
      integrationRequestId: '$context.awsEndpointRequestId',
      ip: '$context.identity.sourceIp',
      httpMethod: '$context.httpMethod',
      resourcePath: '$context.resourcePath',
      status: '$context.status',
      responseLength: '$context.responseLength',
      integrationLatency: '$context.integrationLatency',
      requestTime: '$context.requestTime',
    });
    for (const leak of ['$input', '$context.path', 'querystring', 'header', 'body', 'authorizer', 'userAgent']) {
      expect(setting.Format.toLowerCase()).not.toContain(leak.toLowerCase());
    }
    expect(template.toJSON().Resources[logicalId(stack.api.accessLogGroup)].Properties.RetentionInDays).toBe(30);
  });

  it('has no WAF web ACL by default; the stage throttling still applies', () => {
    template.resourceCountIs('AWS::WAFv2::WebACL', 0);
    template.resourceCountIs('AWS::WAFv2::WebACLAssociation', 0);
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 })],
    });
    expect(() => buildApp({ 'chatctx:waf': 'on' })).toThrow(/chatctx:waf must be true or false/);
  });

  it('with chatctx:waf, puts a web ACL with a per-IP rate rule (1000 per 5 minutes) on the stage, answering JSON-RPC with Retry-After', () => {
    const { template: withWaf, stack: wafStack } = synthTemplate({ 'chatctx:waf': 'true' });
    withWaf.resourceCountIs('AWS::WAFv2::WebACL', 1);
    withWaf.hasResourceProperties('AWS::WAFv2::WebACL', {
      Scope: 'REGIONAL',
      DefaultAction: { Allow: {} },
      Rules: [
        Match.objectLike({
          Action: {
            Block: {
              CustomResponse: { ResponseCode: 429, CustomResponseBodyKey: 'rate-limited', ResponseHeaders: [{ Name: 'Retry-After', Value: '60' }] },
            },
          },
          Statement: { RateBasedStatement: { Limit: 1000, AggregateKeyType: 'IP', EvaluationWindowSec: 300 } },
        }),
      ],
    });
    const body = withWaf.toJSON().Resources[wafStack.getLogicalId(wafStack.api.webAcl!)].Properties.CustomResponseBodies['rate-limited'];
    expect(body.ContentType).toBe('APPLICATION_JSON');
    expect(JSON.parse(body.Content)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32000, message: expect.stringMatching(/Too many requests/) } });
    const stageId = wafStack.getLogicalId(wafStack.api.stage.node.defaultChild as CfnElement);
    withWaf.hasResourceProperties('AWS::WAFv2::WebACLAssociation', {
      WebACLArn: { 'Fn::GetAtt': [wafStack.getLogicalId(wafStack.api.webAcl!), 'Arn'] },
      ResourceArn: { 'Fn::Join': ['', Match.arrayWith(['::/restapis/', { Ref: wafStack.getLogicalId(wafStack.api.api.node.defaultChild as CfnElement) }, '/stages/', { Ref: stageId }])] },
    });
  });

  it('answers what API Gateway itself rejects with JSON-RPC errors, and Retry-After where waiting helps', () => {
    const responses = Object.values(template.findResources('AWS::ApiGateway::GatewayResponse')).map((r) => r.Properties);
    const byType = Object.fromEntries(responses.map((r) => [r.ResponseType as string, r]));
    expect(Object.keys(byType).sort()).toEqual(
      ['DEFAULT_4XX', 'DEFAULT_5XX', 'INTEGRATION_FAILURE', 'INTEGRATION_TIMEOUT', 'MISSING_AUTHENTICATION_TOKEN', 'QUOTA_EXCEEDED', 'THROTTLED', 'WAF_FILTERED'],
    );
    for (const response of responses) {
      expect(response.RestApiId).toEqual({ Ref: logicalId(stack.api.api) });
      const body = JSON.parse((response.ResponseTemplates['application/json'] as string).replace('$context.requestId', 'req-1'));
      expect(body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32000, message: expect.any(String), data: { request_id: 'req-1' } } });
    }
    const retryAfter = (type: string) => byType[type]?.ResponseParameters?.['gatewayresponse.header.Retry-After'];
    expect(retryAfter('THROTTLED')).toBe("'1'");
    expect(retryAfter('QUOTA_EXCEEDED')).toBe("'60'");
    expect(retryAfter('DEFAULT_5XX')).toBe("'5'");
    expect(retryAfter('INTEGRATION_TIMEOUT')).toBe("'5'");
    expect(retryAfter('DEFAULT_4XX')).toBeUndefined();
    expect(byType.MISSING_AUTHENTICATION_TOKEN.StatusCode).toBe('404');
  });

  it('registers the account-level CloudWatch role that API Gateway logging needs', () => {
    template.resourceCountIs('AWS::ApiGateway::Account', 1);
    const { template: without } = synthTemplate({ 'chatctx:apiGatewayCloudWatchRole': false });
    without.resourceCountIs('AWS::ApiGateway::Account', 0);
  });
});

describe('functions', () => {
  it('are eight chatctx functions plus the custom-resource framework, none in a VPC', () => {
    template.resourceCountIs('AWS::Lambda::Function', 9);
    template.allResourcesProperties('AWS::Lambda::Function', { VpcConfig: Match.absent() });
  });

  it.each(FUNCTION_NAMES)('%s runs Node.js 22 on arm64 with X-Ray and its own one-month log group', (name) => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: Match.absent(),
      Handler: 'index.handler',
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      TracingConfig: { Mode: 'Active' },
      LoggingConfig: { LogGroup: { Ref: logicalId(fn(name).logGroup) } },
      Role: { 'Fn::GetAtt': [roleId(name), 'Arn'] },
      Environment: {
        Variables: Match.objectLike({ NODE_OPTIONS: '--enable-source-maps', POWERTOOLS_SERVICE_NAME: 'chatctx' }),
      },
    });
    expect(template.toJSON().Resources[logicalId(fn(name).logGroup)].Properties.RetentionInDays).toBe(30);
  });

  it('reserve 100 concurrent executions for the gateway only (chatctx:gatewayConcurrency; 0 reserves none)', () => {
    const reserved = (t: Template) =>
      Object.entries(t.findResources('AWS::Lambda::Function'))
        .filter(([, f]) => f.Properties.ReservedConcurrentExecutions !== undefined)
        .map(([id, f]) => [id, f.Properties.ReservedConcurrentExecutions]);
    expect(reserved(template)).toEqual([[logicalId(fn('gateway').function), 100]]);
    expect(reserved(synthTemplate({ 'chatctx:gatewayConcurrency': '0' }).template)).toEqual([]);
    expect(() => buildApp({ 'chatctx:gatewayConcurrency': '-1' })).toThrow(/gatewayConcurrency must be a whole number/);
  });

  it('publish a version of each tool and of the gateway every deploy; API Gateway calls the gateway\'s live alias', () => {
    for (const name of ['gateway', 'searchKnowledge', 'getGuidance', 'submitFeedback'] as const) {
      template.hasResourceProperties('AWS::Lambda::Version', { FunctionName: { Ref: logicalId(fn(name).function) } });
    }
    template.hasResourceProperties('AWS::Lambda::Alias', {
      Name: 'live',
      FunctionName: { Ref: logicalId(fn('gateway').function) },
      // The version's logical id carries a hash of the function's code and configuration: a new one each deploy that changes either.
      FunctionVersion: { 'Fn::GetAtt': [Match.stringLikeRegexp(`^${logicalId(fn('gateway').function).slice(0, -8)}CurrentVersion[0-9A-F]{8}[0-9a-f]{32}$`), 'Version'] },
    });
  });

  const variablesOf = (t: Template, name: FunctionName) =>
    t.toJSON().Resources[logicalId(fn(name).function)].Properties.Environment.Variables as Record<string, unknown>;
  const dbVariables = (secret: unknown) => ({
    CHATCTX_DB_CLUSTER_ARN: stack.resolve(stack.database.cluster.clusterArn),
    CHATCTX_DB_SECRET_ARN: stack.resolve(secret),
    CHATCTX_DB_NAME: 'chatctx',
  });
  const base = { NODE_OPTIONS: '--enable-source-maps', POWERTOOLS_SERVICE_NAME: 'chatctx', CHATCTX_STACK_NAME: 'Chatctx' };
  const pepper = () => stack.resolve(stack.pepper.secret.secretArn);
  const embeddings = { CHATCTX_EMBEDDINGS: 'bedrock', CHATCTX_BEDROCK_MODEL_ID: 'amazon.titan-embed-text-v2:0' };

  it('give each function exactly the environment its handler reads', () => {
    expect(variablesOf(template, 'gateway')).toEqual({
      ...base,
      ...dbVariables(stack.database.roleSecret('gateway').secretArn),
      CHATCTX_QUOTA_TABLE_NAME: stack.resolve(stack.quotaTable.table.tableName),
      CHATCTX_PEPPER_SECRET_ARN: pepper(),
      // Qualified ARNs of the versions this deploy published, never $LATEST.
      CHATCTX_TOOL_FUNCTION_SEARCH_KNOWLEDGE: stack.resolve(fn('searchKnowledge').function.currentVersion.functionArn),
      CHATCTX_TOOL_FUNCTION_GET_GUIDANCE: stack.resolve(fn('getGuidance').function.currentVersion.functionArn),
      CHATCTX_TOOL_FUNCTION_SUBMIT_FEEDBACK: stack.resolve(fn('submitFeedback').function.currentVersion.functionArn),
      CHATCTX_GUEST_DAILY_LIMIT: '250',
      CHATCTX_KEY_CACHE_SECONDS: '60',
      CHATCTX_ALLOWED_HOSTS: { 'Fn::Join': ['', [{ Ref: logicalId(stack.api.api) }, '.execute-api.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }]] },
      CHATCTX_ALLOWED_ORIGINS: '',
      CHATCTX_OAUTH_REDIRECT_ALLOWLIST: OAUTH_CONNECTOR_CALLBACKS.join(','),
    });
    const runtime = stack.database.roleSecret('runtime').secretArn;
    expect(variablesOf(template, 'searchKnowledge')).toEqual({ ...base, ...dbVariables(runtime), CHATCTX_PEPPER_SECRET_ARN: pepper(), ...embeddings });
    expect(variablesOf(template, 'getGuidance')).toEqual({ ...base, ...dbVariables(runtime) });
    expect(variablesOf(template, 'submitFeedback')).toEqual({ ...base, ...dbVariables(runtime) });
    expect(variablesOf(template, 'admin')).toEqual({ ...base, ...dbVariables(stack.database.masterSecret.secretArn), CHATCTX_PEPPER_SECRET_ARN: pepper(), ...embeddings });
    expect(variablesOf(template, 'site')).toEqual({ ...base, CHATCTX_GUEST_DAILY_LIMIT: '250' });
    expect(variablesOf(template, 'sourceChecks')).toEqual({
      ...base,
      ...dbVariables(stack.database.roleSecret('runtime').secretArn),
      CHATCTX_SOURCE_CHECK_TOPIC_ARN: stack.resolve(stack.operations.topic.topicArn),
    });
    const migrate = variablesOf(template, 'migrate');
    expect(migrate).toEqual({
      ...base,
      ...dbVariables(stack.database.masterSecret.secretArn),
      CHATCTX_ROLE_SECRET_ARNS: expect.anything(),
      CHATCTX_PEPPER_SECRET_ARN: pepper(),
      CHATCTX_PEPPER_ADOPTED: '0',
      CHATCTX_PEPPER_REPLACE: '0',
    });
  });

  it('set only variables the settings module defines, and every setting the Lambdas read', () => {
    const set = new Set(FUNCTION_NAMES.flatMap((name) => Object.keys(variablesOf(template, name))));
    const known = new Set([...Object.keys(base), ...Object.values(SETTINGS).map((setting) => setting.env)]);
    expect([...set].filter((variable) => !known.has(variable))).toEqual([]);
    // Every AWS-only setting is set for some function (LAMBDA_TASK_ROOT comes from the Lambda runtime itself).
    const awsOnly = Object.values(SETTINGS).filter((setting) => setting.runtimes.join() === 'aws' && setting.env !== SETTINGS.lambdaTaskRoot.env);
    expect(awsOnly.filter((setting) => !set.has(setting.env)).map((setting) => setting.env)).toEqual([]);
  });

  it('give migrate a JSON map from each role to its secret ARN', () => {
    const joined = variablesOf(template, 'migrate').CHATCTX_ROLE_SECRET_ARNS as { 'Fn::Join': [string, unknown[]] };
    // Rebuild the string CloudFormation will produce, with each ARN as its Ref's logical id.
    const rendered = joined['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : `arn-of-${(part as { Ref: string }).Ref}`)).join('');
    const arn = (purpose: keyof typeof DATABASE_ROLES) => `arn-of-${(stack.resolve(stack.database.roleSecret(purpose).secretArn) as { Ref: string }).Ref}`;
    expect(JSON.parse(rendered)).toEqual({ chatctx_runtime: arn('runtime'), chatctx_gateway: arn('gateway') });
  });

  it('take the guest limit and allowed origins from the context', () => {
    const { template: custom, stack: customStack } = synthTemplate({
      'chatctx:guestDailyLimit': '100',
      'chatctx:allowedOrigins': 'https://a.example, https://b.example',
      'chatctx:perIpRateLimit': '2000',
      'chatctx:waf': true,
      'chatctx:customDomains': 'mcp.example.com, chatctx.example.org',
    });
    const gatewayId = customStack.getLogicalId(customStack.functions.gateway.function.node.defaultChild as CfnElement);
    const variables = custom.toJSON().Resources[gatewayId].Properties.Environment.Variables;
    expect(variables.CHATCTX_GUEST_DAILY_LIMIT).toBe('100');
    expect(variables.CHATCTX_ALLOWED_ORIGINS).toBe('https://a.example,https://b.example');
    // The API's own host name first, then the custom domains.
    const hosts = variables.CHATCTX_ALLOWED_HOSTS['Fn::Join'][1] as unknown[];
    expect(hosts.slice(0, 2)).toEqual([{ Ref: customStack.getLogicalId(customStack.api.api.node.defaultChild as CfnElement) }, '.execute-api.']);
    expect(hosts.at(-1)).toBe(',mcp.example.com,chatctx.example.org');
    custom.hasResourceProperties('AWS::WAFv2::WebACL', {
      Rules: [Match.objectLike({ Statement: { RateBasedStatement: Match.objectLike({ Limit: 2000 }) } })],
    });
    expect(() => buildApp({ 'chatctx:allowedOrigins': '*' })).toThrow(/allowedOrigins must list origins/);
    expect(() => buildApp({ 'chatctx:guestDailyLimit': -1 })).toThrow(/guestDailyLimit must be a whole number/);
    expect(() => buildApp({ 'chatctx:customDomains': 'https://mcp.example.com' })).toThrow(/allowed hosts must be host names/);
    expect(() => buildApp({ 'chatctx:customDomains': '*' })).toThrow(/allowed hosts must be host names/);
  });
});

describe('source checks', () => {
  const rules = (t: Template) => Object.values(t.findResources('AWS::Events::Rule')).map((r) => r.Properties);

  it('run weekly by default on an EventBridge schedule that invokes only the source check function, without retries', () => {
    expect(rules(template)).toEqual([
      expect.objectContaining({
        ScheduleExpression: 'rate(7 days)',
        State: 'ENABLED',
        Targets: [expect.objectContaining({ Arn: { 'Fn::GetAtt': [logicalId(fn('sourceChecks').function), 'Arn'] }, RetryPolicy: { MaximumRetryAttempts: 0 } })],
      }),
    ]);
    const invokers = Object.values(template.findResources('AWS::Lambda::Permission')).filter((p) => p.Properties.Principal === 'events.amazonaws.com');
    expect(invokers.map((p) => resourceKey(p.Properties.FunctionName))).toEqual([cfn(fn('sourceChecks').function.functionArn)]);
  });

  it('demote drifted records in answers only when chatctx:driftDemotesConfidence says so, on both reading tools', () => {
    const variables = (t: Template, st: ChatctxStack, name: 'searchKnowledge' | 'getGuidance') =>
      t.toJSON().Resources[st.getLogicalId(st.functions[name].function.node.defaultChild as CfnElement)].Properties.Environment.Variables;
    expect(variables(template, stack, 'searchKnowledge')).not.toHaveProperty('CHATCTX_DRIFT_DEMOTES_CONFIDENCE');
    const { template: on, stack: onStack } = synthTemplate({ 'chatctx:driftDemotesConfidence': true });
    for (const name of ['searchKnowledge', 'getGuidance'] as const) expect(variables(on, onStack, name).CHATCTX_DRIFT_DEMOTES_CONFIDENCE).toBe('1');
  });

  it('take another schedule from chatctx:sourceCheckSchedule, or none with off, and refuse anything else', () => {
    expect(rules(synthTemplate({ 'chatctx:sourceCheckSchedule': 'cron(0 6 ? * MON *)' }).template)).toEqual([expect.objectContaining({ ScheduleExpression: 'cron(0 6 ? * MON *)' })]);
    expect(rules(synthTemplate({ 'chatctx:sourceCheckSchedule': 'off' }).template)).toEqual([]);
    expect(() => buildApp({ 'chatctx:sourceCheckSchedule': 'weekly' })).toThrow(/sourceCheckSchedule must be rate\(…\), cron\(…\) or off/);
  });
});

describe('IAM: each function may do exactly its job', () => {
  const LOGS = ['logs:CreateLogStream', 'logs:PutLogEvents'];
  const XRAY = ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'];
  const DATA_API = ['rds-data:BeginTransaction', 'rds-data:CommitTransaction', 'rds-data:ExecuteStatement', 'rds-data:RollbackTransaction'];
  const READ_SECRET = ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'];

  type Expected = Record<string, string[]>;
  const allow = (expected: Expected, actions: string[], ...resources: string[]) => {
    for (const action of actions) expected[action] = [...(expected[action] ?? []), ...resources].sort();
    return expected;
  };
  const master = () => cfn(stack.database.masterSecret.secretArn);
  const roleSecret = (purpose: keyof typeof DATABASE_ROLES) => cfn(stack.database.roleSecret(purpose).secretArn);
  const pepper = () => cfn(stack.pepper.secret.secretArn);
  const cluster = () => cfn(stack.database.cluster.clusterArn);
  const titan = () =>
    resourceKey({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':bedrock:', { Ref: 'AWS::Region' }, '::foundation-model/amazon.titan-embed-text-v2:0']] });
  const baseline = (name: FunctionName): Expected => {
    const expected: Expected = {};
    allow(expected, LOGS, cfn(fn(name).logGroup.logGroupArn));
    allow(expected, XRAY, resourceKey('*'));
    return expected;
  };
  const database = (expected: Expected, secret: string) => {
    allow(expected, DATA_API, cluster());
    return allow(expected, READ_SECRET, secret);
  };

  const expectations: Record<FunctionName, () => Expected> = {
    gateway: () => {
      const e = database(baseline('gateway'), roleSecret('gateway'));
      allow(e, READ_SECRET, pepper());
      allow(e, ['dynamodb:GetItem', 'dynamodb:UpdateItem'], cfn(stack.quotaTable.table.tableArn));
      return allow(
        e,
        ['lambda:InvokeFunction'],
        ...(['searchKnowledge', 'getGuidance', 'submitFeedback'] as const).map((tool) => cfn(fn(tool).function.currentVersion.functionArn)),
      );
    },
    // The tool role's secret holds the pepper too (one grant covers both).
    searchKnowledge: () => allow(database(baseline('searchKnowledge'), roleSecret('runtime')), ['bedrock:InvokeModel'], titan()),
    getGuidance: () => database(baseline('getGuidance'), roleSecret('runtime')),
    submitFeedback: () => database(baseline('submitFeedback'), roleSecret('runtime')),
    admin: () => allow(allow(database(baseline('admin'), master()), READ_SECRET, pepper()), ['bedrock:InvokeModel'], titan()),
    migrate: () => {
      const e = allow(database(baseline('migrate'), master()), READ_SECRET, roleSecret('runtime'), roleSecret('gateway'));
      // It writes the tool role's password beside the pepper the secret was generated with.
      return allow(e, ['secretsmanager:PutSecretValue'], cfn(stack.database.runtimeSecret.secretArn));
    },
    site: () => baseline('site'),
    // The tool role's secret, the Data API, and publishing to the alarm topic: nothing else.
    sourceChecks: () => allow(database(baseline('sourceChecks'), roleSecret('runtime')), ['sns:Publish'], cfn(stack.operations.topic.topicArn)),
  };

  it.each(FUNCTION_NAMES)('%s: exactly the expected actions on exactly the expected resources', (name) => {
    expect(permissionsOfRole(template, roleId(name))).toEqual(expectations[name]());
  });

  it.each(FUNCTION_NAMES)('%s: role is for Lambda only and carries no managed policy', (name) => {
    const role = template.toJSON().Resources[roleId(name)];
    expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
      { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
    ]);
  });

  /** Every role in the template → its grants, to check what nobody else may do. */
  const allRoles = () => Object.keys(template.findResources('AWS::IAM::Role')).map((id) => ({ id, grants: grantsOfRole(template, id) }));
  const rolesThat = (predicate: (grant: { action: string; resource: string }) => boolean) =>
    allRoles()
      .filter((role) => role.grants.some(predicate))
      .map((role) => role.id)
      .sort();

  it('only admin and migrate can read the master secret', () => {
    expect(rolesThat((g) => g.action.startsWith('secretsmanager:') && g.resource === master())).toEqual([roleId('admin'), roleId('migrate')].sort());
  });

  it('keeps the key boundary with the pepper in the tool role\'s secret: of its readers, only the gateway, admin and migrate may also read API key hashes', () => {
    const pepperReaders = rolesThat((g) => g.action.startsWith('secretsmanager:') && g.resource === pepper());
    expect(pepperReaders).toEqual(
      [roleId('gateway'), roleId('searchKnowledge'), roleId('getGuidance'), roleId('submitFeedback'), roleId('sourceChecks'), roleId('admin'), roleId('migrate')].sort(),
    );
    const keyHashReaders = rolesThat((g) => g.action.startsWith('secretsmanager:') && (g.resource === roleSecret('gateway') || g.resource === master()));
    expect(pepperReaders.filter((role) => keyHashReaders.includes(role))).toEqual([roleId('gateway'), roleId('admin'), roleId('migrate')].sort());
  });

  it('only the gateway touches DynamoDB, and only GetItem/UpdateItem', () => {
    expect(rolesThat((g) => g.action.startsWith('dynamodb:'))).toEqual([roleId('gateway')]);
    const actions = grantsOfRole(template, roleId('gateway')).filter((g) => g.action.startsWith('dynamodb:')).map((g) => g.action);
    expect(actions.sort()).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
  });

  it('only the gateway invokes the tool functions, and no role can invoke admin', () => {
    const tools = (['searchKnowledge', 'getGuidance', 'submitFeedback'] as const).map((tool) => cfn(fn(tool).function.currentVersion.functionArn));
    expect(rolesThat((g) => g.action === 'lambda:InvokeFunction' && tools.includes(g.resource))).toEqual([roleId('gateway')]);
    expect(rolesThat((g) => g.action.startsWith('lambda:') && g.resource.includes(logicalId(fn('admin').function)))).toEqual([]);
  });

  it('only search_knowledge and admin call Bedrock, and only the Titan V2 embedding model', () => {
    expect(rolesThat((g) => g.action.startsWith('bedrock:'))).toEqual([roleId('searchKnowledge'), roleId('admin')].sort());
    for (const role of allRoles()) {
      for (const grant of role.grants.filter((g) => g.action.startsWith('bedrock:'))) {
        expect(grant).toMatchObject({ action: 'bedrock:InvokeModel', resource: titan() });
      }
    }
  });

  it('submit_feedback and get_guidance cannot call Bedrock or see a secret but the tool role’s', () => {
    for (const name of ['submitFeedback', 'getGuidance'] as const) {
      const grants = grantsOfRole(template, roleId(name));
      expect(grants.filter((g) => g.action.startsWith('bedrock:'))).toEqual([]);
      const secrets = new Set(grants.filter((g) => g.action.startsWith('secretsmanager:')).map((g) => g.resource));
      expect(secrets).toEqual(new Set([roleSecret('runtime')]));
    }
  });

  it('only the gateway (and migrate) can read the gateway role’s secret, the one role that sees API keys', () => {
    expect(rolesThat((g) => g.action.startsWith('secretsmanager:') && g.resource === roleSecret('gateway'))).toEqual([roleId('gateway'), roleId('migrate')].sort());
  });

  it('with chatctx:perFunctionRoles, each tool reads only its own role’s secret', () => {
    const { template: perFunction, stack: perStack } = synthTemplate({ 'chatctx:perFunctionRoles': true });
    const secretOf = (purpose: 'search' | 'reader' | 'feedback') => resourceKey(perStack.resolve(perStack.database.roleSecret(purpose).secretArn));
    const pairs = [['searchKnowledge', 'search'], ['getGuidance', 'reader'], ['submitFeedback', 'feedback']] as const;
    for (const [name, purpose] of pairs) {
      const role = perStack.getLogicalId(perStack.functions[name].role.node.defaultChild as CfnElement);
      const secrets = grantsOfRole(perFunction, role).filter((g) => g.action.startsWith('secretsmanager:') && g.resource !== resourceKey(perStack.resolve(perStack.pepper.secret.secretArn)));
      expect(new Set(secrets.map((g) => g.resource))).toEqual(new Set([secretOf(purpose)]));
    }
    // There the pepper is the runtime secret's alone, and only the functions that hash read it.
    const pepperOf = resourceKey(perStack.resolve(perStack.pepper.secret.secretArn));
    const readers = ['gateway', 'searchKnowledge', 'getGuidance', 'submitFeedback', 'admin', 'migrate', 'sourceChecks'] as const;
    const reading = readers.filter((name) =>
      grantsOfRole(perFunction, perStack.getLogicalId(perStack.functions[name].role.node.defaultChild as CfnElement)).some((g) => g.resource === pepperOf),
    );
    expect(reading).toEqual(['gateway', 'searchKnowledge', 'admin', 'migrate']);
  });

  it('no role anywhere in the stack uses "*" as a resource except for the X-Ray actions', () => {
    for (const role of allRoles()) {
      for (const grant of role.grants) {
        if (grant.resource === resourceKey('*')) expect(XRAY, `${role.id} ${grant.action}`).toContain(grant.action);
        expect(grant.action.endsWith('*'), `${role.id} ${grant.action}`).toBe(false);
      }
    }
  });
});

describe('operations: alarms, dashboard, budget', () => {
  const topicRef = () => ({ Ref: logicalId(stack.operations.topic) });
  const alarms = (t: Template) => Object.values(t.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties);
  const metricNames = (alarm: Record<string, unknown>) =>
    ((alarm.Metrics as { MetricStat?: { Metric: { MetricName: string } } }[] | undefined) ?? [])
      .flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric.MetricName] : []))
      .sort();

  it('has one TLS-only topic, no e-mail subscription unless chatctx:alarmEmail names one', () => {
    template.resourceCountIs('AWS::SNS::Topic', 1);
    template.resourceCountIs('AWS::SNS::Subscription', 0);
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
    // The topic's policy replaces SNS's default, so CloudWatch may publish only through an explicit Allow: this account's alarms.
    const policy = Object.values(template.findResources('AWS::SNS::TopicPolicy'))[0]!.Properties.PolicyDocument.Statement as Record<string, any>[];
    const allow = policy.find((s) => s.Effect === 'Allow' && s.Principal?.Service === 'cloudwatch.amazonaws.com')!;
    expect(allow).toMatchObject({ Action: 'sns:Publish', Resource: topicRef(), Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } } });
    const alarmArns = Object.keys(template.findResources('AWS::CloudWatch::Alarm')).map((id) => ({ 'Fn::GetAtt': [id, 'Arn'] }));
    expect(allow.Condition.ArnEquals['aws:SourceArn']).toEqual(expect.arrayContaining(alarmArns));
    expect(allow.Condition.ArnEquals['aws:SourceArn']).toHaveLength(alarmArns.length);
    const { template: withEmail } = synthTemplate({ 'chatctx:alarmEmail': 'ops@example.com' });
    withEmail.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
    expect(() => buildApp({ 'chatctx:alarmEmail': 'ops@example.com,dev@example.com' })).toThrow(/alarmEmail must be one e-mail address/);
  });

  it('has four alarms named after the stack reading five metrics (USD 0.50 a month), each notifying the topic on alarm and on recovery', () => {
    const all = alarms(template);
    expect(all.map((alarm) => alarm.AlarmName).sort()).toEqual(
      ['Chatctx-ApiServerErrors', 'Chatctx-DatabaseAwakeWhileIdle', 'Chatctx-OAuthAbuse', 'Chatctx-RequestPathFailures'],
    );
    for (const alarm of all) {
      expect(alarm.AlarmActions).toEqual([topicRef()]);
      expect(alarm.OKActions).toEqual([topicRef()]);
      expect(alarm.TreatMissingData).toBe('notBreaching');
    }
    const metricCount = all.reduce((sum, alarm) => sum + (alarm.MetricName ? 1 : metricNames(alarm).length), 0);
    expect(metricCount).toBe(5);
  });

  /** The single metric an alarm reads, with its namespace and dimensions. */
  const onlyMetric = (alarm: Record<string, unknown>) =>
    (alarm.Metrics as { MetricStat: { Metric: { Namespace: string; Dimensions: unknown[] }; Stat: string; Period: number } }[])[0]!.MetricStat;

  it('alarms on OAuth security events from the gateway\'s own metric of this stack (50 in 5 minutes)', () => {
    const abuse = alarms(template).find((alarm) => metricNames(alarm).includes('oauth_security_event'))!;
    expect(abuse).toMatchObject({ Threshold: 50, EvaluationPeriods: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    expect(onlyMetric(abuse)).toMatchObject({ Stat: 'Sum', Period: 300, Metric: { Namespace: 'chatctx' } });
    expect(onlyMetric(abuse).Metric.Dimensions).toEqual([
      { Name: 'service', Value: 'chatctx-mcp' },
      { Name: 'stack', Value: 'Chatctx' },
    ]);
  });

  it('alarms on the stage\'s 5XXError (5 in 5 minutes)', () => {
    const serverErrors = alarms(template).find((alarm) => metricNames(alarm).includes('5XXError'))!;
    expect(serverErrors).toMatchObject({ Threshold: 5, EvaluationPeriods: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    expect(onlyMetric(serverErrors)).toMatchObject({ Stat: 'Sum', Period: 300, Metric: { Namespace: 'AWS/ApiGateway' } });
    expect(onlyMetric(serverErrors).Metric.Dimensions).toContainEqual({ Name: 'Stage', Value: { Ref: logicalId(stack.api.stage) } });
  });

  it('alarms on any error line of the gateway or a tool through one metric the four functions share, per stack', () => {
    const failures = alarms(template).find((alarm) => metricNames(alarm).includes('request_path_failure'))!;
    expect(failures).toMatchObject({ Threshold: 1, EvaluationPeriods: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    expect(onlyMetric(failures).Metric.Dimensions).toEqual([
      { Name: 'service', Value: 'chatctx-request-path' },
      { Name: 'stack', Value: 'Chatctx' },
    ]);
  });

  it('alarms when Aurora stays above 0 ACU for six idle hours, only when it may pause', () => {
    const idle = alarms(template).find((alarm) => metricNames(alarm).includes('ServerlessDatabaseCapacity'))!;
    expect(idle).toMatchObject({ EvaluationPeriods: 6, DatapointsToAlarm: 6, Threshold: 1 });
    expect(metricNames(idle)).toEqual(['Count', 'ServerlessDatabaseCapacity']);
    const expression = (idle.Metrics as { Expression?: string }[]).find((m) => m.Expression)!.Expression;
    expect(expression).toBe('IF(capacity > 0 AND FILL(requests, 0) < 12, 1, 0)');
    const { template: alwaysOn } = synthTemplate({ 'chatctx:minCapacity': 0.5 });
    expect(alarms(alwaysOn).filter((alarm) => metricNames(alarm).includes('ServerlessDatabaseCapacity'))).toEqual([]);
  });

  it('builds no dashboard by default (USD 3.00 a month past an account\'s third); chatctx:dashboard adds one named after the stack', () => {
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    const { template: withDashboard } = synthTemplate({ 'chatctx:dashboard': 'true' });
    withDashboard.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'Chatctx' });
    const body = JSON.stringify(Object.values(withDashboard.findResources('AWS::CloudWatch::Dashboard'))[0]!.Properties.DashboardBody);
    for (const metric of ['5XXError', '4XXError', 'Latency', 'Errors', 'Throttles', 'ServerlessDatabaseCapacity', 'ThrottledRequests', 'oauth_security_event', 'request_path_failure']) {
      expect(body).toContain(metric);
    }
  });

  it('has a USD 30 monthly budget by default, notifying the topic; chatctx:monthlyBudgetUsd sets the amount, 0 none', () => {
    const topic = topicRef();
    template.hasResourceProperties('AWS::Budgets::Budget', {
      Budget: { BudgetName: 'Chatctx monthly cost', BudgetType: 'COST', TimeUnit: 'MONTHLY', BudgetLimit: { Amount: 30, Unit: 'USD' } },
      NotificationsWithSubscribers: [
        { Notification: Match.objectLike({ NotificationType: 'ACTUAL', Threshold: 80 }), Subscribers: [{ SubscriptionType: 'SNS', Address: topic }] },
        { Notification: Match.objectLike({ NotificationType: 'FORECASTED', Threshold: 100 }), Subscribers: [{ SubscriptionType: 'SNS', Address: topic }] },
      ],
    });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: 'sns:Publish', Principal: { Service: 'budgets.amazonaws.com' } })]) },
    });
    synthTemplate({ 'chatctx:monthlyBudgetUsd': '20' }).template.hasResourceProperties('AWS::Budgets::Budget', { Budget: Match.objectLike({ BudgetLimit: { Amount: 20, Unit: 'USD' } }) });
    synthTemplate({ 'chatctx:monthlyBudgetUsd': '0' }).template.resourceCountIs('AWS::Budgets::Budget', 0);
    expect(() => buildApp({ 'chatctx:monthlyBudgetUsd': '-5' })).toThrow(/monthlyBudgetUsd must be an amount/);
  });

  it('sends cost anomalies of USD 10 or more to the topic by default; chatctx:costAnomalyUsd sets the amount, 0 none', () => {
    template.hasResourceProperties('AWS::CE::AnomalyMonitor', { MonitorType: 'DIMENSIONAL', MonitorDimension: 'SERVICE', MonitorName: 'Chatctx services' });
    const monitorId = logicalId(stack.operations.anomalyMonitor!);
    template.hasResourceProperties('AWS::CE::AnomalySubscription', {
      Frequency: 'IMMEDIATE',
      MonitorArnList: [{ 'Fn::GetAtt': [monitorId, 'MonitorArn'] }],
      Subscribers: [{ Type: 'SNS', Address: topicRef() }],
      ThresholdExpression: JSON.stringify({ Dimensions: { Key: 'ANOMALY_TOTAL_IMPACT_ABSOLUTE', MatchOptions: ['GREATER_THAN_OR_EQUAL'], Values: ['10'] } }),
    });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: 'sns:Publish', Principal: { Service: 'costalerts.amazonaws.com' } })]) },
    });
    const off = synthTemplate({ 'chatctx:costAnomalyUsd': '0' }).template;
    off.resourceCountIs('AWS::CE::AnomalyMonitor', 0);
    off.resourceCountIs('AWS::CE::AnomalySubscription', 0);
  });
});

describe('two stacks in one app', () => {
  it('name their API, alarms, budget, anomaly monitor and metric dimensions apart', () => {
    const app = buildApp().app;
    const second = new ChatctxStack(app, 'ChatctxStaging', {});
    const a = Template.fromStack(stack);
    const b = Template.fromStack(second);
    const names = (t: Template, type: string, property: string) => Object.values(t.findResources(type)).map((r) => JSON.stringify(r.Properties[property]));
    for (const [type, property] of [
      ['AWS::ApiGateway::RestApi', 'Name'],
      ['AWS::CloudWatch::Alarm', 'AlarmName'],
      ['AWS::CE::AnomalyMonitor', 'MonitorName'],
    ] as const) {
      const shared = names(a, type, property).filter((name) => names(b, type, property).includes(name));
      expect(shared, type).toEqual([]);
    }
    // Every chatctx function publishes its metrics under its own stack's name (the framework function publishes none).
    const dimension = (t: Template) =>
      Object.values(t.findResources('AWS::Lambda::Function')).flatMap((f) => f.Properties.Environment?.Variables?.CHATCTX_STACK_NAME ?? []);
    expect(dimension(b)).toEqual(Array(8).fill('ChatctxStaging'));
    expect(dimension(a)).toEqual(Array(8).fill('Chatctx'));
  });
});

describe('outputs', () => {
  it('gives the MCP URL (stage URL + "mcp") and the admin function name, and nothing else', () => {
    template.hasOutput('McpUrl', {
      Value: {
        'Fn::Join': [
          '',
          ['https://', { Ref: logicalId(stack.api.api) }, '.execute-api.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }, '/', { Ref: logicalId(stack.api.stage) }, '/mcp'],
        ],
      },
    });
    template.hasOutput('AdminFunctionName', { Value: { Ref: logicalId(fn('admin').function) } });
    template.hasOutput('OwnerPolicyArn', { Value: { Ref: logicalId(stack.ownerPolicy) } });
    expect(Object.keys(template.toJSON().Outputs).sort()).toEqual(['AdminFunctionName', 'McpUrl', 'OwnerPolicyArn']);
  });

  it('offers an owner policy that may invoke the admin function and nothing else', () => {
    const policy = template.toJSON().Resources[logicalId(stack.ownerPolicy)];
    expect(policy.Type).toBe('AWS::IAM::ManagedPolicy');
    expect(policy.Properties.PolicyDocument.Statement).toEqual([
      { Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: { 'Fn::GetAtt': [logicalId(fn('admin').function), 'Arn'] } },
    ]);
    expect(policy.Properties.Roles ?? policy.Properties.Users ?? policy.Properties.Groups).toBeUndefined();
  });
});


describe('migrations custom resource and the migrate bundle', () => {
  it('asks for the hash the migrate function computes over the schema copied into its bundle', async () => {
    // Imported here so that this block stands alone. If the two hashes ever differed,
    // the function would take every deploy for a rollback and apply nothing.
    const { execSync } = await import('node:child_process');
    const { rmSync } = await import('node:fs');
    const { PROJECT_ROOT } = await import('../../lib/bundling.ts');
    const { BUNDLED_FILES } = await import('../../lib/mcp-functions.ts');
    const { schemaHash: bundledSchemaHash } = await import('../../lambdas/storage/schema-hash.ts');
    const bundle = mkdtempSync(join(tmpdir(), 'chatctx-migrate-bundle-'));
    try {
      for (const command of BUNDLED_FILES.migrate.afterBundling(PROJECT_ROOT, bundle)) execSync(command, { shell: '/bin/sh', stdio: 'pipe' });
      const resources = Object.values(template.findResources('Custom::ChatctxMigrations')) as { Properties: { SchemaHash: string } }[];
      expect(resources).toHaveLength(1);
      expect(resources[0]!.Properties.SchemaHash).toBe(bundledSchemaHash(join(bundle, 'schema') + '/'));
    } finally {
      rmSync(bundle, { recursive: true, force: true });
    }
  });
});

/**
 * The synthesized CloudFormation of the chatctx stack: every resource the
 * deployment relies on, the settings a user would notice (capacity, limits, log
 * retention, URLs) and, above all, what each function's role may and may not do.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CfnElement } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ChatctxStack } from '../../lib/chatctx-stack.ts';
import { DATABASE_ROLES } from '../../lib/database.ts';
import { MCP_METHODS, PUBLIC_DOC_PATHS } from '../../lib/mcp-api.ts';
import { schemaHash } from '../../lib/migrations.ts';
import { SETTINGS } from '../../lambdas/config/settings.ts';
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

const FUNCTION_NAMES = ['gateway', 'searchKnowledge', 'getGuidance', 'submitFeedback', 'admin', 'migrate', 'site'] as const;
type FunctionName = (typeof FUNCTION_NAMES)[number];
const fn = (name: FunctionName) => stack.functions[name];
const roleId = (name: FunctionName) => logicalId(fn(name).role);

describe('database', () => {
  it('is Aurora PostgreSQL 16 Serverless v2 with the Data API, encrypted, auto-pausing by default', () => {
    template.resourceCountIs('AWS::RDS::DBCluster', 1);
    template.hasResource('AWS::RDS::DBCluster', {
      Properties: {
        Engine: 'aurora-postgresql',
        EngineVersion: Match.stringLikeRegexp('^16\\.'),
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

  it('has one secret per database role with a generated password', () => {
    for (const role of Object.values(DATABASE_ROLES)) {
      template.hasResourceProperties('AWS::SecretsManager::Secret', {
        GenerateSecretString: {
          SecretStringTemplate: Match.serializedJson(Match.objectLike({ username: role })),
          GenerateStringKey: 'password',
        },
      });
    }
    // The master secret plus the four role secrets, each attached to the cluster.
    template.resourceCountIs('AWS::SecretsManager::SecretTargetAttachment', 5);
    template.allResourcesProperties('AWS::SecretsManager::SecretTargetAttachment', {
      TargetType: 'AWS::RDS::DBCluster',
      TargetId: { Ref: logicalId(stack.database.cluster) },
    });
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
  it('runs migrate with a hash of schema/*.sql, after the writer instance exists', () => {
    const writer = stack.database.cluster.node.findChild('writer');
    template.hasResource('Custom::ChatctxMigrations', {
      Properties: {
        ServiceToken: { 'Fn::GetAtt': [Match.stringLikeRegexp('^MigrationsProviderframeworkonEvent'), 'Arn'] },
        SchemaHash: schemaHash(),
        Roles: Object.values(DATABASE_ROLES),
      },
      DependsOn: Match.arrayWith([logicalId(writer)]),
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'framework.onEvent',
      Environment: { Variables: { USER_ON_EVENT_FUNCTION_ARN: { 'Fn::GetAtt': [logicalId(fn('migrate').function), 'Arn'] } } },
    });
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
  it('is generated by Secrets Manager as 64 alphanumerics under "pepper", kept on removal, never rotated', () => {
    template.hasResource('AWS::SecretsManager::Secret', {
      Properties: {
        GenerateSecretString: {
          SecretStringTemplate: '{}',
          GenerateStringKey: 'pepper',
          PasswordLength: 64,
          ExcludePunctuation: true,
        },
      },
      DeletionPolicy: 'Retain',
    });
    template.resourceCountIs('AWS::SecretsManager::RotationSchedule', 0);
  });
});

describe('REST API', () => {
  const resourceIdOf = (pathPart: string) => {
    const found = template.findResources('AWS::ApiGateway::Resource', { Properties: { PathPart: pathPart } });
    expect(Object.keys(found), `resource /${pathPart}`).toHaveLength(1);
    return Object.keys(found)[0]!;
  };
  const proxyTo = (name: FunctionName) => ({
    Type: 'AWS_PROXY',
    IntegrationHttpMethod: 'POST',
    Uri: { 'Fn::Join': ['', Match.arrayWith([{ 'Fn::GetAtt': [logicalId(fn(name).function), 'Arn'] }, '/invocations'])] },
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
    template.resourceCountIs('AWS::ApiGateway::Method', MCP_METHODS.length + PUBLIC_DOC_PATHS.length);
  });

  it('lets API Gateway invoke only the gateway and site functions, per method, without test invokes', () => {
    const permissions = Object.values(template.findResources('AWS::Lambda::Permission'));
    const targets = new Set(permissions.map((p) => resourceKey(p.Properties.FunctionName)));
    expect(targets).toEqual(new Set([cfn(fn('gateway').function.functionArn), cfn(fn('site').function.functionArn)]));
    expect(permissions).toHaveLength(MCP_METHODS.length + PUBLIC_DOC_PATHS.length);
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

  it('puts a WAF web ACL with a per-IP rate rule (1000 per 5 minutes) on the stage', () => {
    template.hasResourceProperties('AWS::WAFv2::WebACL', {
      Scope: 'REGIONAL',
      DefaultAction: { Allow: {} },
      Rules: [
        Match.objectLike({
          Action: { Block: Match.objectLike({ CustomResponse: { ResponseCode: 429 } }) },
          Statement: { RateBasedStatement: { Limit: 1000, AggregateKeyType: 'IP', EvaluationWindowSec: 300 } },
        }),
      ],
    });
    const stageId = logicalId(stack.api.stage);
    template.hasResourceProperties('AWS::WAFv2::WebACLAssociation', {
      WebACLArn: { 'Fn::GetAtt': [logicalId(stack.api.webAcl), 'Arn'] },
      ResourceArn: { 'Fn::Join': ['', Match.arrayWith(['::/restapis/', { Ref: logicalId(stack.api.api) }, '/stages/', { Ref: stageId }])] },
    });
  });

  it('registers the account-level CloudWatch role that API Gateway logging needs', () => {
    template.resourceCountIs('AWS::ApiGateway::Account', 1);
    const { template: without } = synthTemplate({ 'chatctx:apiGatewayCloudWatchRole': false });
    without.resourceCountIs('AWS::ApiGateway::Account', 0);
  });
});

describe('functions', () => {
  it('are seven chatctx functions plus the custom-resource framework, none in a VPC', () => {
    template.resourceCountIs('AWS::Lambda::Function', 8);
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

  const variablesOf = (t: Template, name: FunctionName) =>
    t.toJSON().Resources[logicalId(fn(name).function)].Properties.Environment.Variables as Record<string, unknown>;
  const dbVariables = (secret: unknown) => ({
    CHATCTX_DB_CLUSTER_ARN: stack.resolve(stack.database.cluster.clusterArn),
    CHATCTX_DB_SECRET_ARN: stack.resolve(secret),
    CHATCTX_DB_NAME: 'chatctx',
  });
  const base = { NODE_OPTIONS: '--enable-source-maps', POWERTOOLS_SERVICE_NAME: 'chatctx' };
  const pepper = () => stack.resolve(stack.pepper.secret.secretArn);
  const embeddings = { CHATCTX_EMBEDDINGS: 'bedrock', CHATCTX_BEDROCK_MODEL_ID: 'amazon.titan-embed-text-v2:0' };

  it('give each function exactly the environment its handler reads', () => {
    const secrets = stack.database.roleSecrets;
    expect(variablesOf(template, 'gateway')).toEqual({
      ...base,
      ...dbVariables(secrets.gateway.secretArn),
      CHATCTX_QUOTA_TABLE_NAME: stack.resolve(stack.quotaTable.table.tableName),
      CHATCTX_PEPPER_SECRET_ARN: pepper(),
      CHATCTX_TOOL_FUNCTION_SEARCH_KNOWLEDGE: stack.resolve(fn('searchKnowledge').function.functionName),
      CHATCTX_TOOL_FUNCTION_GET_GUIDANCE: stack.resolve(fn('getGuidance').function.functionName),
      CHATCTX_TOOL_FUNCTION_SUBMIT_FEEDBACK: stack.resolve(fn('submitFeedback').function.functionName),
      CHATCTX_GUEST_DAILY_LIMIT: '250',
      CHATCTX_ALLOWED_HOSTS: '*',
      CHATCTX_ALLOWED_ORIGINS: '',
    });
    expect(variablesOf(template, 'searchKnowledge')).toEqual({ ...base, ...dbVariables(secrets.search.secretArn), CHATCTX_PEPPER_SECRET_ARN: pepper(), ...embeddings });
    expect(variablesOf(template, 'getGuidance')).toEqual({ ...base, ...dbVariables(secrets.reader.secretArn) });
    expect(variablesOf(template, 'submitFeedback')).toEqual({ ...base, ...dbVariables(secrets.feedback.secretArn) });
    expect(variablesOf(template, 'admin')).toEqual({ ...base, ...dbVariables(stack.database.masterSecret.secretArn), CHATCTX_PEPPER_SECRET_ARN: pepper(), ...embeddings });
    expect(variablesOf(template, 'site')).toEqual({ ...base, CHATCTX_GUEST_DAILY_LIMIT: '250' });
    const migrate = variablesOf(template, 'migrate');
    expect(migrate).toEqual({ ...base, ...dbVariables(stack.database.masterSecret.secretArn), CHATCTX_ROLE_SECRET_ARNS: expect.anything() });
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
    const secrets = stack.database.roleSecrets;
    const arn = (secret: { secretArn: string }) => `arn-of-${(stack.resolve(secret.secretArn) as { Ref: string }).Ref}`;
    expect(JSON.parse(rendered)).toEqual({
      chatctx_search: arn(secrets.search),
      chatctx_reader: arn(secrets.reader),
      chatctx_feedback: arn(secrets.feedback),
      chatctx_gateway: arn(secrets.gateway),
    });
  });

  it('take the guest limit and allowed origins from the context', () => {
    const { template: custom, stack: customStack } = synthTemplate({
      'chatctx:guestDailyLimit': '100',
      'chatctx:allowedOrigins': 'https://a.example, https://b.example',
      'chatctx:perIpRateLimit': '2000',
    });
    const gatewayId = customStack.getLogicalId(customStack.functions.gateway.function.node.defaultChild as CfnElement);
    const variables = custom.toJSON().Resources[gatewayId].Properties.Environment.Variables;
    expect(variables.CHATCTX_GUEST_DAILY_LIMIT).toBe('100');
    expect(variables.CHATCTX_ALLOWED_ORIGINS).toBe('https://a.example,https://b.example');
    custom.hasResourceProperties('AWS::WAFv2::WebACL', {
      Rules: [Match.objectLike({ Statement: { RateBasedStatement: Match.objectLike({ Limit: 2000 }) } })],
    });
    expect(() => buildApp({ 'chatctx:allowedOrigins': '*' })).toThrow(/allowedOrigins must list origins/);
    expect(() => buildApp({ 'chatctx:guestDailyLimit': -1 })).toThrow(/guestDailyLimit must be a whole number/);
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
  const roleSecret = (purpose: keyof typeof DATABASE_ROLES) => cfn(stack.database.roleSecrets[purpose].secretArn);
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
        ...(['searchKnowledge', 'getGuidance', 'submitFeedback'] as const).map((tool) => cfn(fn(tool).function.functionArn)),
      );
    },
    searchKnowledge: () => allow(allow(database(baseline('searchKnowledge'), roleSecret('search')), READ_SECRET, pepper()), ['bedrock:InvokeModel'], titan()),
    getGuidance: () => database(baseline('getGuidance'), roleSecret('reader')),
    submitFeedback: () => database(baseline('submitFeedback'), roleSecret('feedback')),
    admin: () => allow(allow(database(baseline('admin'), master()), READ_SECRET, pepper()), ['bedrock:InvokeModel'], titan()),
    migrate: () =>
      allow(
        database(baseline('migrate'), master()),
        READ_SECRET,
        ...(Object.keys(DATABASE_ROLES) as (keyof typeof DATABASE_ROLES)[]).map(roleSecret),
      ),
    site: () => baseline('site'),
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

  it('only the gateway, search_knowledge and admin can read the pepper', () => {
    expect(rolesThat((g) => g.action.startsWith('secretsmanager:') && g.resource === pepper())).toEqual(
      [roleId('gateway'), roleId('searchKnowledge'), roleId('admin')].sort(),
    );
  });

  it('only the gateway touches DynamoDB, and only GetItem/UpdateItem', () => {
    expect(rolesThat((g) => g.action.startsWith('dynamodb:'))).toEqual([roleId('gateway')]);
    const actions = grantsOfRole(template, roleId('gateway')).filter((g) => g.action.startsWith('dynamodb:')).map((g) => g.action);
    expect(actions.sort()).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
  });

  it('only the gateway invokes the tool functions, and no role can invoke admin', () => {
    const tools = (['searchKnowledge', 'getGuidance', 'submitFeedback'] as const).map((tool) => cfn(fn(tool).function.functionArn));
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

  it('submit_feedback and get_guidance cannot read the pepper, call Bedrock or see another role’s secret', () => {
    for (const name of ['submitFeedback', 'getGuidance'] as const) {
      const grants = grantsOfRole(template, roleId(name));
      expect(grants.filter((g) => g.action.startsWith('bedrock:'))).toEqual([]);
      expect(grants.filter((g) => g.resource === pepper())).toEqual([]);
      const secrets = new Set(grants.filter((g) => g.action.startsWith('secretsmanager:')).map((g) => g.resource));
      expect(secrets).toEqual(new Set([roleSecret(name === 'submitFeedback' ? 'feedback' : 'reader')]));
    }
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
    expect(Object.keys(template.toJSON().Outputs).sort()).toEqual(['AdminFunctionName', 'McpUrl']);
  });
});

/**
 * The custom domain the stack builds for connectors (`chatctx:domainName` and the
 * keys that go with it): a regional API Gateway domain name with the stage mapped
 * at its root, its certificate (given, or created and validated in the hosted
 * zone), the alias records when the stack has the zone, the gateway's Host
 * allow-list and the outputs. Without the keys none of it exists; settings that
 * cannot work stop the synth.
 */
import { App, CfnElement, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ChatctxStack } from '../../lib/chatctx-stack.ts';
import { McpApi } from '../../lib/mcp-api.ts';
import { buildApp, synthTemplate } from './synth-app.ts';

const DOMAIN = 'mcp.example.com';
const CERTIFICATE_ARN = 'arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789';
const ZONE_ID = 'Z0123456789ABCDEFGHIJ';
const ZONE_NAME = 'example.com';
const WITH_CERTIFICATE = { 'chatctx:domainName': DOMAIN, 'chatctx:certificateArn': CERTIFICATE_ARN };
const WITH_ZONE = { 'chatctx:domainName': DOMAIN, 'chatctx:hostedZoneId': ZONE_ID, 'chatctx:hostedZoneName': ZONE_NAME };

/** The logical id of a construct's CloudFormation resource. */
const logicalIdIn = (stack: Stack, construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as CfnElement);

/** The gateway function's `CHATCTX_ALLOWED_HOSTS`, as the template's `Fn::Join` parts. */
function allowedHostParts(template: Template, stack: ChatctxStack): unknown[] {
  const gateway = template.toJSON().Resources[logicalIdIn(stack, stack.functions.gateway.function)];
  return gateway.Properties.Environment.Variables.CHATCTX_ALLOWED_HOSTS['Fn::Join'][1] as unknown[];
}

describe('a custom domain with a certificate ARN', () => {
  let stack: ChatctxStack;
  let template: Template;
  beforeAll(() => {
    ({ stack, template } = synthTemplate(WITH_CERTIFICATE));
  });
  const domainId = () => logicalIdIn(stack, stack.api.customDomain!);

  it('is one regional API Gateway domain name on that certificate, TLS 1.2 at least, IPv4 and IPv6', () => {
    template.resourceCountIs('AWS::ApiGateway::DomainName', 1);
    template.hasResourceProperties('AWS::ApiGateway::DomainName', {
      DomainName: DOMAIN,
      RegionalCertificateArn: CERTIFICATE_ARN,
      EndpointConfiguration: { Types: ['REGIONAL'], IpAddressType: 'dualstack' },
      SecurityPolicy: 'TLS_1_2',
      CertificateArn: Match.absent(),
    });
  });

  it('maps the stage at the root of the domain, so the OAuth metadata sits at the host root and paths carry no stage', () => {
    template.resourceCountIs('AWS::ApiGateway::BasePathMapping', 1);
    template.hasResourceProperties('AWS::ApiGateway::BasePathMapping', {
      DomainName: { Ref: domainId() },
      RestApiId: { Ref: logicalIdIn(stack, stack.api.api) },
      Stage: { Ref: logicalIdIn(stack, stack.api.stage) },
      BasePath: Match.absent(),
    });
  });

  it('joins the gateway function\'s Host allow-list after the API\'s own host name', () => {
    const parts = allowedHostParts(template, stack);
    expect(parts.slice(0, 2)).toEqual([{ Ref: logicalIdIn(stack, stack.api.api) }, '.execute-api.']);
    expect(parts.at(-1)).toBe(`,${DOMAIN}`);
  });

  it('makes McpUrl the domain\'s URL and keeps the execute-api URL and the DNS target as outputs', () => {
    template.hasOutput('McpUrl', { Value: `https://${DOMAIN}/mcp` });
    template.hasOutput('ExecuteApiMcpUrl', {
      Value: { 'Fn::Join': ['', Match.arrayWith(['https://', { Ref: logicalIdIn(stack, stack.api.api) }, '.execute-api.', '/mcp'])] },
    });
    template.hasOutput('CustomDomainTarget', { Value: { 'Fn::GetAtt': [domainId(), 'RegionalDomainName'] } });
    template.hasOutput('CustomDomainTargetZoneId', { Value: { 'Fn::GetAtt': [domainId(), 'RegionalHostedZoneId'] } });
  });

  it('creates no certificate and no DNS record: the zone is not the stack\'s', () => {
    template.resourceCountIs('AWS::CertificateManager::Certificate', 0);
    template.resourceCountIs('AWS::Route53::RecordSet', 0);
  });

  it('lists a name given both here and in chatctx:customDomains once', () => {
    const { template: both, stack: bothStack } = synthTemplate({ ...WITH_CERTIFICATE, 'chatctx:customDomains': `chatctx.example.org, ${DOMAIN}` });
    expect(allowedHostParts(both, bothStack).at(-1)).toBe(`,${DOMAIN},chatctx.example.org`);
  });
});

describe('a custom domain in a hosted zone the stack may write to', () => {
  let stack: ChatctxStack;
  let template: Template;
  beforeAll(() => {
    ({ stack, template } = synthTemplate(WITH_ZONE));
  });
  const domainId = () => logicalIdIn(stack, stack.api.customDomain!);

  it('gets a new certificate, validated by DNS in that zone', () => {
    template.resourceCountIs('AWS::CertificateManager::Certificate', 1);
    template.hasResourceProperties('AWS::CertificateManager::Certificate', {
      DomainName: DOMAIN,
      ValidationMethod: 'DNS',
      DomainValidationOptions: [{ DomainName: DOMAIN, HostedZoneId: ZONE_ID }],
    });
    const certificateId = Object.keys(template.findResources('AWS::CertificateManager::Certificate'))[0]!;
    template.hasResourceProperties('AWS::ApiGateway::DomainName', { DomainName: DOMAIN, RegionalCertificateArn: { Ref: certificateId } });
  });

  it('gets alias A and AAAA records to the domain\'s regional target', () => {
    const aliasTarget = { DNSName: { 'Fn::GetAtt': [domainId(), 'RegionalDomainName'] }, HostedZoneId: { 'Fn::GetAtt': [domainId(), 'RegionalHostedZoneId'] } };
    const records = Object.values(template.findResources('AWS::Route53::RecordSet')).map((r) => r.Properties);
    expect(records).toEqual(
      ['A', 'AAAA'].map((Type) => ({ Type, Name: `${DOMAIN}.`, HostedZoneId: ZONE_ID, AliasTarget: aliasTarget })),
    );
    template.hasOutput('McpUrl', { Value: `https://${DOMAIN}/mcp` });
  });

  it('uses a given certificate instead of creating one, and still writes the records', () => {
    const { template: given } = synthTemplate({ ...WITH_ZONE, 'chatctx:certificateArn': CERTIFICATE_ARN, 'chatctx:hostedZoneName': `${ZONE_NAME}.` });
    given.resourceCountIs('AWS::CertificateManager::Certificate', 0);
    given.hasResourceProperties('AWS::ApiGateway::DomainName', { RegionalCertificateArn: CERTIFICATE_ARN });
    given.resourceCountIs('AWS::Route53::RecordSet', 2);
  });

  it('may be the zone\'s apex', () => {
    const { template: apex } = synthTemplate({ ...WITH_ZONE, 'chatctx:domainName': ZONE_NAME });
    apex.hasResourceProperties('AWS::Route53::RecordSet', { Name: `${ZONE_NAME}.`, Type: 'A' });
  });
});

describe('without a custom domain', () => {
  it('builds no domain name, mapping, certificate or record, and McpUrl stays the execute-api URL', () => {
    const { template, stack } = synthTemplate();
    for (const type of ['AWS::ApiGateway::DomainName', 'AWS::ApiGateway::BasePathMapping', 'AWS::CertificateManager::Certificate', 'AWS::Route53::RecordSet']) {
      template.resourceCountIs(type, 0);
    }
    expect(stack.api.customDomain).toBeUndefined();
    expect(Object.keys(template.toJSON().Outputs)).not.toContain('ExecuteApiMcpUrl');
    expect(Object.keys(template.toJSON().Outputs).filter((name) => name.startsWith('CustomDomain'))).toEqual([]);
    template.hasOutput('McpUrl', { Value: { 'Fn::Join': ['', Match.arrayWith(['.execute-api.', '/mcp'])] } });
  });
});

describe('custom domain settings that cannot work', () => {
  const cases: [string, Record<string, string>, RegExp][] = [
    ['a domain without a certificate or a zone', { 'chatctx:domainName': DOMAIN }, /domainName mcp\.example\.com needs certificateArn .* or hostedZoneId and hostedZoneName/],
    ['a certificate that is no ACM ARN', { ...WITH_CERTIFICATE, 'chatctx:certificateArn': 'arn:aws:iam::123456789012:server-certificate/mcp' }, /certificateArn must be an ACM certificate ARN/],
    ['a domain outside the zone', { ...WITH_ZONE, 'chatctx:domainName': 'mcp.example.org' }, /domainName mcp\.example\.org is not in the hosted zone example\.com/],
    ['a zone whose name only ends like the domain', { ...WITH_ZONE, 'chatctx:domainName': 'mcp.notexample.com' }, /is not in the hosted zone example\.com/],
    ['a zone id without its name', { ...WITH_CERTIFICATE, 'chatctx:hostedZoneId': ZONE_ID }, /hostedZoneId and hostedZoneName go together/],
    ['a malformed zone id', { ...WITH_ZONE, 'chatctx:hostedZoneId': '/hostedzone/Z0123' }, /hostedZoneId must be a Route 53 hosted zone id/],
    ['a domain with a scheme', { ...WITH_CERTIFICATE, 'chatctx:domainName': 'https://mcp.example.com' }, /domainName must be a lower-case host name/],
    ['a domain in upper case', { ...WITH_CERTIFICATE, 'chatctx:domainName': 'MCP.example.com' }, /domainName must be a lower-case host name/],
    ['a wildcard domain', { ...WITH_CERTIFICATE, 'chatctx:domainName': '*.example.com' }, /domainName must be a lower-case host name/],
    ['a certificate without a domain', { 'chatctx:certificateArn': CERTIFICATE_ARN }, /context chatctx:certificateArn: used only with chatctx:domainName, which is not set/],
    ['a zone without a domain', { 'chatctx:hostedZoneId': ZONE_ID, 'chatctx:hostedZoneName': ZONE_NAME }, /context chatctx:hostedZoneId, chatctx:hostedZoneName: used only with chatctx:domainName/],
  ];
  it.each(cases)('stop the synth: %s', (_name, context, message) => {
    expect(() => buildApp(context)).toThrow(message);
  });

  it('stop the synth on a certificate from another region when the stack names its region', () => {
    const apiIn = (region: string, certificateArn: string) => () => {
      const stack = new Stack(new App(), 'Regional', { env: { region } });
      const fn = (id: string) => new lambda.Function(stack, id, { runtime: lambda.Runtime.NODEJS_22_X, handler: 'index.handler', code: lambda.Code.fromInline('exports.handler = async () => ({})') });
      return new McpApi(stack, 'Api', { gatewayFunction: fn('Gateway'), siteFunction: fn('Site'), customDomain: { domainName: DOMAIN, certificateArn } });
    };
    expect(apiIn('eu-west-1', CERTIFICATE_ARN)).toThrow(/certificateArn must be in the stack's region \(eu-west-1\) for a regional custom domain, got one in us-east-1/);
    expect(apiIn('us-east-1', CERTIFICATE_ARN)).not.toThrow();
  });
});

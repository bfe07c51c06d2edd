/**
 * cdk-nag's AWS Solutions checks over the real stack.
 *
 * cdk-nag 3 is a CDK policy-validation plugin, not an Aspect: findings do not
 * become construct annotations (so `Annotations.fromStack(...).findError` would
 * see nothing); they go into the cloud assembly's `validation-report.json`, and an
 * unacknowledged error makes `app.synth()` throw with the report. Acknowledgments
 * are `Validations.of(construct).acknowledge(...)`, made in the constructs (lib/),
 * each with its reason. This file pins that set so that a new finding, or a new
 * acknowledgment, is a visible change.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validations } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from './synth-app.ts';

interface Violation {
  ruleName: string;
  severity: string;
  violatingConstructs: { constructPath: string }[];
  acknowledgedId?: string;
  acknowledgedAt?: string;
  reason?: string;
}
interface PluginReport {
  pluginName: string;
  conclusion: string;
  violations: Violation[];
  suppressedViolations?: Violation[];
}

function synthWithNag(context: Record<string, unknown> = {}) {
  const { app, stack } = buildApp({ ...context, 'chatctx:nag': true });
  const assembly = app.synth();
  const report = JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8')) as { pluginReports: PluginReport[] };
  const nag = report.pluginReports.find((r) => r.pluginName === 'AwsSolutions');
  if (!nag) throw new Error('the AwsSolutions pack did not run');
  return { app, stack, nag, reports: report.pluginReports };
}

function acknowledgmentsIn(root: IConstruct): { path: string; id: string; reason: string }[] {
  const found: { path: string; id: string; reason: string }[] = [];
  for (const construct of root.node.findAll()) {
    for (const entry of construct.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) found.push({ path: construct.node.path, id, reason });
    }
  }
  return found;
}

const MIGRATE_INVOKE_WILDCARD = /^AwsSolutions-IAM5\[Resource::<FunctionsMigrateFunction[0-9A-F]{8}\.Arn>:\*\]$/;

describe('cdk-nag AWS Solutions checks', () => {
  let app: ReturnType<typeof synthWithNag>['app'];
  let stack: ReturnType<typeof synthWithNag>['stack'];
  let nag: PluginReport;
  let reports: PluginReport[];
  let suppressed: Violation[];
  beforeAll(() => {
    ({ app, stack, nag, reports } = synthWithNag());
    suppressed = nag.suppressedViolations ?? [];
  });
  const suppressedPaths = (rule: string | RegExp) =>
    suppressed
      .filter((v) => (typeof rule === 'string' ? v.ruleName === rule : rule.test(v.ruleName)))
      .flatMap((v) => v.violatingConstructs.map((c) => c.constructPath))
      .sort();

  it('leave no unacknowledged error or warning', () => {
    expect(nag.violations.map((v) => `${v.severity} ${v.ruleName} ${v.violatingConstructs.map((c) => c.constructPath).join(', ')}`)).toEqual([]);
    expect(nag.conclusion).toBe('success');
    // CloudFormation's own template checks (on by cdk.json's feature flag) find nothing either.
    expect(reports.flatMap((r) => r.violations)).toEqual([]);
  });

  it('acknowledge exactly the reviewed set of findings', () => {
    const rules = [...new Set(suppressed.map((v) => (MIGRATE_INVOKE_WILDCARD.test(v.ruleName) ? 'IAM5 on migrate:*' : v.ruleName)))].sort();
    expect(rules).toEqual([
      'AwsSolutions-APIG2',
      'AwsSolutions-APIG3',
      'AwsSolutions-APIG4',
      'AwsSolutions-COG4',
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      'AwsSolutions-IAM5[Resource::*]',
      'AwsSolutions-L1',
      'AwsSolutions-RDS10',
      'AwsSolutions-RDS6',
      'AwsSolutions-SMG4',
      'IAM5 on migrate:*',
    ]);
  });

  it('acknowledge the X-Ray wildcard and the pinned runtime only on the eight chatctx functions', () => {
    const functions = ['Admin', 'Gateway', 'GetGuidance', 'Migrate', 'SearchKnowledge', 'Site', 'SourceChecks', 'SubmitFeedback'];
    expect(suppressedPaths('AwsSolutions-IAM5[Resource::*]')).toEqual(functions.map((f) => `${stack.stackName}/Functions/${f}/Role/DefaultPolicy/Resource`));
    expect(suppressedPaths('AwsSolutions-L1')).toEqual(functions.map((f) => `${stack.stackName}/Functions/${f}/Function/Resource`));
  });

  it('acknowledge missing rotation only on the database secrets (the tool role\'s holds the pepper)', () => {
    expect(suppressedPaths('AwsSolutions-SMG4')).toEqual(
      ['Database/Cluster/Secret/Resource', 'Database/GatewaySecret/Resource', 'Database/RuntimeSecret/Resource'].map((path) => `${stack.stackName}/${path}`),
    );
  });

  it('use every acknowledgment, each with a written reason', () => {
    const used = new Set(suppressed.map((v) => `${v.acknowledgedAt} ${v.acknowledgedId}`));
    // Only ours: CDK itself acknowledges some CloudFormation-Validate rules.
    const acknowledgments = acknowledgmentsIn(app).filter((ack) => ack.id.startsWith('AwsSolutions::'));
    expect(acknowledgments.length).toBeGreaterThan(0);
    for (const ack of acknowledgments) {
      expect(used, `unused acknowledgment ${ack.id} at ${ack.path}`).toContain(`${ack.path} ${ack.id}`);
      expect(ack.reason.length, `reason of ${ack.id} at ${ack.path}`).toBeGreaterThan(60);
    }
  });

  it('do not acknowledge missing deletion protection when it is on', () => {
    const { nag: protectedNag } = synthWithNag({ 'chatctx:deletionProtection': true });
    const rds10 = [...protectedNag.violations, ...(protectedNag.suppressedViolations ?? [])].filter((v) => v.ruleName === 'AwsSolutions-RDS10');
    expect(rds10).toEqual([]);
    expect(protectedNag.violations).toEqual([]);
  });

  it('acknowledge the missing WAF only while it is off, and stay clean with WAF, per-function roles, an alarm e-mail and a budget', () => {
    expect(suppressedPaths('AwsSolutions-APIG3')).toEqual([`${stack.stackName}/Api/Api/DeploymentStage.v1/Resource`]);
    const { nag: full, stack: fullStack } = synthWithNag({
      'chatctx:waf': true,
      'chatctx:perFunctionRoles': true,
      'chatctx:alarmEmail': 'ops@example.com',
      'chatctx:monthlyBudgetUsd': 25,
    });
    expect(full.violations).toEqual([]);
    const fullSuppressed = full.suppressedViolations ?? [];
    expect(fullSuppressed.filter((v) => v.ruleName === 'AwsSolutions-APIG3')).toEqual([]);
    expect(fullSuppressed.filter((v) => v.ruleName === 'AwsSolutions-SMG4').flatMap((v) => v.violatingConstructs.map((c) => c.constructPath)).sort()).toEqual(
      ['Cluster/Secret', 'FeedbackSecret', 'GatewaySecret', 'ReaderSecret', 'RuntimeSecret', 'SearchSecret', 'VerifierSecret'].map((path) => `${fullStack.stackName}/Database/${path}/Resource`),
    );
  });

  it('stay clean with a custom domain, its new certificate and its alias records, acknowledging nothing more', () => {
    const domain = { 'chatctx:domainName': 'mcp.example.com', 'chatctx:hostedZoneId': 'Z0123456789ABCDEFGHIJ', 'chatctx:hostedZoneName': 'example.com' };
    const { nag: withDomain, reports: domainReports } = synthWithNag(domain);
    expect(withDomain.violations).toEqual([]);
    expect(domainReports.flatMap((r) => r.violations)).toEqual([]);
    const rules = (report: PluginReport) => [...new Set((report.suppressedViolations ?? []).map((v) => v.ruleName))].sort();
    expect(rules(withDomain)).toEqual(rules(nag));
  });

  it('fail the synth on a finding nobody acknowledged', () => {
    const { app: bad, stack: badStack } = buildApp({ 'chatctx:nag': true });
    new s3.Bucket(badStack, 'UnreviewedBucket');
    expect(() => bad.synth()).toThrow(/AwsSolutions::AwsSolutions-S1'/);
  });
});

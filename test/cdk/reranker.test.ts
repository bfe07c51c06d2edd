/**
 * `chatctx:reranker`: off by default; on, the search function (and no other) gets
 * the reranker model in its environment, `bedrock:Rerank` (which has no
 * resource-level permissions, so "*") and InvokeModel on exactly that model's ARN,
 * and cdk-nag stays clean with one reasoned acknowledgment for the "*".
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CfnElement } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import type { ChatctxStack } from '../../lib/chatctx-stack.ts';
import { SETTINGS } from '../../lambdas/config/settings.ts';
import { grantsOfRole, permissionsOfRole, resourceKey } from './iam-statements.ts';
import { buildApp, synthTemplate } from './synth-app.ts';

const COHERE = 'cohere.rerank-v3-5:0';
const modelArn = (model: string) =>
  resourceKey({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':bedrock:', { Ref: 'AWS::Region' }, `::foundation-model/${model}`]] });
const TITAN = modelArn('amazon.titan-embed-text-v2:0');

const logicalIdOf = (stack: ChatctxStack, construct: IConstruct) =>
  stack.getLogicalId(construct instanceof CfnElement ? construct : (construct.node.defaultChild as CfnElement));

function synth(context: Record<string, unknown> = {}) {
  const { stack, template } = synthTemplate(context);
  const roleOf = (name: 'searchKnowledge' | 'admin') => logicalIdOf(stack, stack.functions[name].role);
  const bedrockGrants = (t: Template) =>
    Object.keys(t.findResources('AWS::IAM::Role')).flatMap((role) =>
      grantsOfRole(t, role)
        .filter((g) => g.action.startsWith('bedrock:'))
        .map((g) => ({ role, action: g.action, resource: g.resource })),
    );
  const searchVariables = template.toJSON().Resources[logicalIdOf(stack, stack.functions.searchKnowledge.function)].Properties.Environment.Variables as Record<string, unknown>;
  return { stack, template, roleOf, bedrock: bedrockGrants(template), searchVariables };
}

describe('chatctx:reranker', () => {
  it('is off by default: no reranker variable, and Bedrock only for Titan embeddings', () => {
    const { roleOf, bedrock, searchVariables } = synth();
    expect(searchVariables).not.toHaveProperty(SETTINGS.reranker.env);
    expect(bedrock.filter((g) => g.action !== 'bedrock:InvokeModel' || g.resource !== TITAN)).toEqual([]);
    expect(new Set(bedrock.map((g) => g.role))).toEqual(new Set([roleOf('searchKnowledge'), roleOf('admin')]));
  });

  it('on, lets the search function alone call Rerank and invoke exactly the reranker model', () => {
    const { template, roleOf, bedrock, searchVariables } = synth({ 'chatctx:reranker': COHERE });
    expect(searchVariables[SETTINGS.reranker.env]).toBe(COHERE);
    const search = permissionsOfRole(template, roleOf('searchKnowledge'));
    expect(search['bedrock:Rerank']).toEqual([resourceKey('*')]);
    expect(search['bedrock:InvokeModel']).toEqual([modelArn(COHERE), TITAN].sort());
    expect(Object.keys(search).filter((action) => action.startsWith('bedrock:')).sort()).toEqual(['bedrock:InvokeModel', 'bedrock:Rerank']);
    // Nobody else gains anything: admin still invokes Titan alone.
    expect(bedrock.filter((g) => g.role !== roleOf('searchKnowledge'))).toEqual([{ role: roleOf('admin'), action: 'bedrock:InvokeModel', resource: TITAN }]);
  });

  it('on, makes the search function wait for the rerank permissions', () => {
    const { stack, template } = synth({ 'chatctx:reranker': 'amazon.rerank-v1:0' });
    const policies = template.findResources('AWS::IAM::Policy');
    const rerankPolicy = Object.entries(policies).find(([, p]) => JSON.stringify(p.Properties.PolicyDocument).includes('bedrock:Rerank'))![0];
    const fn = template.toJSON().Resources[logicalIdOf(stack, stack.functions.searchKnowledge.function)];
    expect(fn.DependsOn).toContain(rerankPolicy);
    expect(JSON.stringify(policies[rerankPolicy]!.Properties.PolicyDocument)).toContain('foundation-model/amazon.rerank-v1:0');
  });

  it('refuses a value that is not none or a reranker model id', () => {
    expect(() => buildApp({ 'chatctx:reranker': 'amazon.titan-embed-text-v2:0' })).toThrow(/reranker must be none or a Bedrock reranker model id/);
    expect(() => buildApp({ 'chatctx:reranker': 'cohere' })).toThrow(/reranker must be none or a Bedrock reranker model id/);
  });

  it('on, keeps cdk-nag clean, acknowledging the "*" of bedrock:Rerank on its own policy with its own reason', () => {
    const { app, stack } = buildApp({ 'chatctx:reranker': COHERE, 'chatctx:nag': true });
    const assembly = app.synth();
    const report = JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8')) as {
      pluginReports: { pluginName: string; violations: unknown[]; suppressedViolations?: { ruleName: string; reason?: string; violatingConstructs: { constructPath: string }[] }[] }[];
    };
    const nag = report.pluginReports.find((r) => r.pluginName === 'AwsSolutions')!;
    expect(nag.violations).toEqual([]);
    const wildcard = (nag.suppressedViolations ?? []).filter((v) => v.ruleName === 'AwsSolutions-IAM5[Resource::*]');
    const onRerankPolicy = wildcard.filter((v) => v.violatingConstructs.some((c) => c.constructPath === `${stack.stackName}/Functions/SearchRerankPolicy/Resource`));
    expect(onRerankPolicy).toHaveLength(1);
    expect(onRerankPolicy[0]!.reason).toMatch(/bedrock:Rerank/);
    // The X-Ray acknowledgment on the search function's default policy is not what covers it.
    expect(wildcard.filter((v) => v.reason?.includes('X-Ray')).flatMap((v) => v.violatingConstructs.map((c) => c.constructPath))).not.toContain(
      `${stack.stackName}/Functions/SearchRerankPolicy/Resource`,
    );
  });
});

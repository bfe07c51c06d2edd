/**
 * Reads what an IAM role may do out of a synthesized template: every statement of
 * every `AWS::IAM::Policy` attached to the role (and its inline policies),
 * flattened to (effect, action, resource) grants so that assertions do not depend
 * on how CDK happens to merge statements.
 */
import type { Template } from 'aws-cdk-lib/assertions';

export interface Grant {
  readonly effect: string;
  readonly action: string;
  /** The resource as CloudFormation JSON (a string, `{"Ref": …}`, `{"Fn::Join": …}`, …), stringified. */
  readonly resource: string;
}

interface PolicyStatementJson {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
}

const list = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** Stringifies a CloudFormation value the same way the grants do, for comparisons. */
export const resourceKey = (resource: unknown): string => JSON.stringify(resource);

/** All statements that reach the role with logical id `roleLogicalId`. */
export function statementsOfRole(template: Template, roleLogicalId: string): PolicyStatementJson[] {
  const statements: PolicyStatementJson[] = [];
  const policies = template.findResources('AWS::IAM::Policy') as Record<string, { Properties: { Roles?: unknown[]; PolicyDocument: { Statement: PolicyStatementJson[] } } }>;
  for (const policy of Object.values(policies)) {
    const attached = (policy.Properties.Roles ?? []).some((role) => resourceKey(role) === resourceKey({ Ref: roleLogicalId }));
    if (attached) statements.push(...policy.Properties.PolicyDocument.Statement);
  }
  const role = template.findResources('AWS::IAM::Role')[roleLogicalId] as
    | { Properties: { Policies?: { PolicyDocument: { Statement: PolicyStatementJson[] } }[] } }
    | undefined;
  if (!role) throw new Error(`no AWS::IAM::Role ${roleLogicalId} in the template`);
  for (const inline of role.Properties.Policies ?? []) statements.push(...inline.PolicyDocument.Statement);
  return statements;
}

/** The role's statements flattened to one grant per (action, resource). */
export function grantsOfRole(template: Template, roleLogicalId: string): Grant[] {
  const grants: Grant[] = [];
  for (const statement of statementsOfRole(template, roleLogicalId)) {
    if (statement.Condition !== undefined) throw new Error(`unexpected condition in a statement of ${roleLogicalId}`);
    for (const action of list(statement.Action)) {
      for (const resource of list(statement.Resource)) grants.push({ effect: statement.Effect, action, resource: resourceKey(resource) });
    }
  }
  return grants;
}

/**
 * The grants as a sorted map action → sorted resource keys (Allow only; a Deny makes
 * the helper throw, since none is expected).
 */
export function permissionsOfRole(template: Template, roleLogicalId: string): Record<string, string[]> {
  const byAction: Record<string, Set<string>> = {};
  for (const grant of grantsOfRole(template, roleLogicalId)) {
    if (grant.effect !== 'Allow') throw new Error(`unexpected ${grant.effect} statement on ${roleLogicalId}`);
    (byAction[grant.action] ??= new Set()).add(grant.resource);
  }
  return Object.fromEntries(
    Object.keys(byAction)
      .sort()
      .map((action) => [action, [...byAction[action]!].sort()]),
  );
}

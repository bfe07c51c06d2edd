/**
 * Composes the CDK app from its context: reads the `chatctx:*` context values
 * (from `cdk.json` or `-c key=value`), creates the `ChatctxStack`, and registers
 * the cdk-nag AWS Solutions checks when `chatctx:nag` is true. `bin/app.ts` calls
 * this; the CDK tests call it too, so they test the wiring that deploys.
 *
 * Context values given with `-c` arrive as strings, so numbers and booleans are
 * parsed here, strictly: a typo stops the synth instead of deploying a default.
 */
import { Validations, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { Node } from 'constructs';
import { ChatctxStack, type ChatctxStackProps } from './chatctx-stack.ts';

/** The context keys this app reads. */
export const CONTEXT_KEYS = {
  stackName: 'chatctx:stackName',
  minCapacity: 'chatctx:minCapacity',
  maxCapacity: 'chatctx:maxCapacity',
  deletionProtection: 'chatctx:deletionProtection',
  guestDailyLimit: 'chatctx:guestDailyLimit',
  allowedOrigins: 'chatctx:allowedOrigins',
  waf: 'chatctx:waf',
  perIpRateLimit: 'chatctx:perIpRateLimit',
  perFunctionRoles: 'chatctx:perFunctionRoles',
  customDomains: 'chatctx:customDomains',
  domainName: 'chatctx:domainName',
  certificateArn: 'chatctx:certificateArn',
  hostedZoneId: 'chatctx:hostedZoneId',
  hostedZoneName: 'chatctx:hostedZoneName',
  alarmEmail: 'chatctx:alarmEmail',
  monthlyBudgetUsd: 'chatctx:monthlyBudgetUsd',
  apiGatewayCloudWatchRole: 'chatctx:apiGatewayCloudWatchRole',
  sourceCheckSchedule: 'chatctx:sourceCheckSchedule',
  driftDemotesConfidence: 'chatctx:driftDemotesConfidence',
  reranker: 'chatctx:reranker',
  pepperSecretArn: 'chatctx:pepperSecretArn',
  replacePepper: 'chatctx:replacePepper',
  gatewayConcurrency: 'chatctx:gatewayConcurrency',
  costAnomalyUsd: 'chatctx:costAnomalyUsd',
  dashboard: 'chatctx:dashboard',
  nag: 'chatctx:nag',
} as const;

/** What the context configures. */
export interface ChatctxAppSettings {
  /** The stack's name (and construct id). */
  readonly stackName: string;
  /** The stack's props. */
  readonly stackProps: ChatctxStackProps;
  /** Whether the cdk-nag AWS Solutions checks run at synth. */
  readonly nag: boolean;
}

/** Reads and checks the `chatctx:*` context values. */
export function readAppSettings(node: Node): ChatctxAppSettings {
  return {
    stackName: stringContext(node, CONTEXT_KEYS.stackName) ?? 'Chatctx',
    stackProps: {
      minCapacity: numberContext(node, CONTEXT_KEYS.minCapacity),
      maxCapacity: numberContext(node, CONTEXT_KEYS.maxCapacity),
      deletionProtection: booleanContext(node, CONTEXT_KEYS.deletionProtection),
      guestDailyLimit: numberContext(node, CONTEXT_KEYS.guestDailyLimit),
      allowedOrigins: listContext(node, CONTEXT_KEYS.allowedOrigins),
      waf: booleanContext(node, CONTEXT_KEYS.waf),
      perIpRateLimit: numberContext(node, CONTEXT_KEYS.perIpRateLimit),
      perFunctionRoles: booleanContext(node, CONTEXT_KEYS.perFunctionRoles),
      customDomains: listContext(node, CONTEXT_KEYS.customDomains),
      customDomain: customDomainContext(node),
      alarmEmail: stringContext(node, CONTEXT_KEYS.alarmEmail),
      monthlyBudgetUsd: numberContext(node, CONTEXT_KEYS.monthlyBudgetUsd),
      apiGatewayCloudWatchRole: booleanContext(node, CONTEXT_KEYS.apiGatewayCloudWatchRole),
      sourceCheckSchedule: stringContext(node, CONTEXT_KEYS.sourceCheckSchedule),
      driftDemotesConfidence: booleanContext(node, CONTEXT_KEYS.driftDemotesConfidence),
      reranker: stringContext(node, CONTEXT_KEYS.reranker),
      pepperSecretArn: stringContext(node, CONTEXT_KEYS.pepperSecretArn) || undefined,
      replacePepper: booleanContext(node, CONTEXT_KEYS.replacePepper),
      gatewayConcurrency: numberContext(node, CONTEXT_KEYS.gatewayConcurrency),
      costAnomalyUsd: numberContext(node, CONTEXT_KEYS.costAnomalyUsd),
      dashboard: booleanContext(node, CONTEXT_KEYS.dashboard),
    },
    nag: booleanContext(node, CONTEXT_KEYS.nag) ?? false,
  };
}

/** Adds the chatctx stack (and, if asked, the nag checks) to `app`. */
export function configureApp(app: App): ChatctxStack {
  const settings = readAppSettings(app.node);
  const stack = new ChatctxStack(app, settings.stackName, settings.stackProps);
  if (settings.nag) Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return stack;
}

/**
 * The custom domain from `chatctx:domainName` and the keys that go with it; the
 * stack checks them together (lib/mcp-api.ts), this only refuses those set
 * without a domain name, which would otherwise do nothing.
 */
function customDomainContext(node: Node): ChatctxStackProps['customDomain'] {
  const domainName = stringContext(node, CONTEXT_KEYS.domainName);
  const certificateArn = stringContext(node, CONTEXT_KEYS.certificateArn);
  const hostedZoneId = stringContext(node, CONTEXT_KEYS.hostedZoneId);
  const hostedZoneName = stringContext(node, CONTEXT_KEYS.hostedZoneName);
  if (domainName !== undefined) return { domainName, certificateArn, hostedZoneId, hostedZoneName };
  const orphans = [
    [CONTEXT_KEYS.certificateArn, certificateArn],
    [CONTEXT_KEYS.hostedZoneId, hostedZoneId],
    [CONTEXT_KEYS.hostedZoneName, hostedZoneName],
  ].flatMap(([key, value]) => (value === undefined ? [] : [key]));
  if (orphans.length > 0) throw new Error(`context ${orphans.join(', ')}: used only with ${CONTEXT_KEYS.domainName}, which is not set`);
  return undefined;
}

function stringContext(node: Node, key: string): string | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new Error(`context ${key} must be a string, got ${JSON.stringify(value)}`);
  return value;
}

function numberContext(node: Node, key: string): number | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  const parsed = typeof value === 'string' ? Number(value.trim()) : value;
  if (typeof parsed !== 'number' || !Number.isFinite(parsed)) {
    throw new Error(`context ${key} must be a number, got ${JSON.stringify(value)}`);
  }
  return parsed;
}

function booleanContext(node: Node, key: string): boolean | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'boolean') return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new Error(`context ${key} must be true or false, got ${JSON.stringify(value)}`);
}

/** A list from a JSON array or a comma-separated string. */
function listContext(node: Node, key: string): string[] | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value.map((item) => item.trim());
  if (typeof value === 'string') return value.split(',').map((item) => item.trim()).filter((item) => item.length > 0);
  throw new Error(`context ${key} must be a list of strings or a comma-separated string, got ${JSON.stringify(value)}`);
}

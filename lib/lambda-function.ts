/**
 * One chatctx Lambda function with the project's defaults: Node.js 22 on arm64,
 * ESM bundle built by local esbuild (`bundling.ts`), X-Ray tracing, its own log
 * group with one month of retention and its own role.
 *
 * The role starts with nothing but writing to its own log group (not the managed
 * AWSLambdaBasicExecutionRole, which may create any log group): every other
 * permission is granted by the construct that wires the function
 * (`mcp-functions.ts`). This construct does not put the function in a VPC: the
 * functions reach Aurora through the Data API.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, type ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { PROJECT_ROOT, bundlingOptions } from './bundling.ts';
import { SETTINGS } from '../lambdas/config/settings.ts';

/** Environment every chatctx function gets; a function's own variables are added to these. */
export const BASE_ENVIRONMENT: Readonly<Record<string, string>> = {
  NODE_OPTIONS: '--enable-source-maps',
  POWERTOOLS_SERVICE_NAME: 'chatctx',
};

export interface ChatctxFunctionProps {
  /**
   * The handler's source file, relative to the project root (e.g.
   * `lambdas/handlers/gateway.ts`). It must export `handler`.
   */
  readonly entry: string;

  /**
   * What the function does, shown in the Lambda console.
   *
   * @default - no description
   */
  readonly description?: string;

  /**
   * Memory in MB (128–10240). CPU scales with it.
   *
   * @default 512
   */
  readonly memorySize?: number;

  /**
   * How long one invocation may run (at most 15 minutes).
   *
   * @default Duration.seconds(10)
   */
  readonly timeout?: Duration;

  /**
   * The function's own environment variables, added to `BASE_ENVIRONMENT`. They may
   * not redefine a base variable.
   *
   * @default - only `BASE_ENVIRONMENT`
   */
  readonly environment?: Readonly<Record<string, string>>;

  /**
   * Shell commands run around esbuild, e.g. to copy files the function reads at
   * run time into the bundle (see `copyFilesAfterBundling`).
   *
   * @default - no hooks
   */
  readonly commandHooks?: ICommandHooks;

  /**
   * How long the function's logs are kept.
   *
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;

  /**
   * Concurrent executions reserved for (and so the most allowed to) this function.
   *
   * @default - none: the function shares the account's unreserved concurrency
   */
  readonly reservedConcurrentExecutions?: number;
}

export class ChatctxFunction extends Construct {
  /** The Lambda function. */
  public readonly function: NodejsFunction;
  /** The function's execution role; grant permissions to it (or to `function`). */
  public readonly role: iam.Role;
  /** The function's log group. */
  public readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: ChatctxFunctionProps) {
    super(scope, id);
    const memorySize = props.memorySize ?? 512;
    const timeout = props.timeout ?? Duration.seconds(10);
    validate(props, memorySize, timeout);

    this.logGroup = new logs.LogGroup(this, 'LogGroup', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
    });

    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${id}`,
    });
    // Exactly what the runtime needs to write logs, on this function's log group only.
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [this.logGroup.logGroupArn],
      }),
    );

    this.function = new NodejsFunction(this, 'Function', {
      entry: join(PROJECT_ROOT, props.entry),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      description: props.description,
      memorySize,
      timeout,
      tracing: lambda.Tracing.ACTIVE,
      role: this.role,
      logGroup: this.logGroup,
      // The stack's name is the `stack` dimension of every metric the function publishes.
      environment: { ...BASE_ENVIRONMENT, [SETTINGS.stackName.env]: Stack.of(this).stackName, ...props.environment },
      bundling: bundlingOptions(props.commandHooks),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
    });

    Validations.of(this).acknowledge(
      {
        id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
        reason:
          'Only the X-Ray statement that active tracing adds (xray:PutTraceSegments, xray:PutTelemetryRecords): X-Ray has no ' +
          'resource-level permissions for these actions. test/cdk/stack.test.ts checks that no other statement uses "*".',
      },
      {
        id: 'AwsSolutions::AwsSolutions-L1',
        reason:
          'Runtime pinned to nodejs22.x to match the esbuild target (node22) the bundles are built and tested for; moving to ' +
          'a newer runtime is a deliberate change of both together (lib/bundling.ts NODE_TARGET).',
      },
    );
  }
}

function validate(props: ChatctxFunctionProps, memorySize: number, timeout: Duration): void {
  if (!/\.(ts|mts|js|mjs)$/.test(props.entry) || props.entry.startsWith('/')) {
    throw new Error(`entry must be a .ts/.js file relative to the project root, got "${props.entry}"`);
  }
  if (!existsSync(join(PROJECT_ROOT, props.entry))) {
    throw new Error(`entry ${props.entry} does not exist (looked in ${PROJECT_ROOT})`);
  }
  if (!Number.isInteger(memorySize) || memorySize < 128 || memorySize > 10_240) {
    throw new Error(`memorySize must be an integer between 128 and 10240 MB, got ${memorySize}`);
  }
  if (!timeout.isUnresolved() && (timeout.toSeconds() < 1 || timeout.toSeconds() > 900)) {
    throw new Error(`timeout must be between 1 second and 15 minutes, got ${timeout.toHumanString()}`);
  }
  const reserved = props.reservedConcurrentExecutions;
  if (reserved !== undefined && (!Number.isInteger(reserved) || reserved < 1)) {
    throw new Error(`reservedConcurrentExecutions must be a whole number of at least 1, got ${reserved}`);
  }
  for (const name of Object.keys(props.environment ?? {})) {
    if (name in BASE_ENVIRONMENT) throw new Error(`environment may not redefine ${name}`);
  }
}

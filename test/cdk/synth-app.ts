/**
 * Builds the CDK app for tests exactly as `bin/app.ts` does (same `configureApp`,
 * same `cdk.json` context, feature flags included), with Lambda bundling skipped
 * so a synth takes seconds and needs neither esbuild runs nor AWS credentials.
 */
import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { PROJECT_ROOT } from '../../lib/bundling.ts';
import { configureApp } from '../../lib/chatctx-app.ts';
import type { ChatctxStack } from '../../lib/chatctx-stack.ts';

// No CLI is driving this app: nothing may ask npm or AWS anything.
process.env.CDK_DISABLE_VERSION_CHECK = '1';
process.env.CDK_DISABLE_CLI_TELEMETRY = '1';

/** The `context` block of the project's cdk.json. */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(`${PROJECT_ROOT}/cdk.json`, 'utf8')) as { context: Record<string, unknown> };
  return cdkJson.context;
}

export interface SynthesizedApp {
  readonly app: App;
  readonly stack: ChatctxStack;
}

/**
 * The app with cdk.json's context plus `context` (as `-c key=value` would give it;
 * values may be strings). cdk-nag is off unless `context` turns it on.
 */
export function buildApp(context: Record<string, unknown> = {}): SynthesizedApp {
  const app = new App({
    context: {
      ...cdkJsonContext(),
      'chatctx:nag': false,
      // Skip esbuild for every stack; the bundling itself is tested in bundling.test.ts.
      'aws:cdk:bundling-stacks': [],
      // Validation failures throw with the full report in the message.
      '@aws-cdk/core:appMode': 'inmemory',
      ...context,
    },
  });
  const stack = configureApp(app);
  return { app, stack };
}

/** Synthesizes the app and returns the stack's template. */
export function synthTemplate(context: Record<string, unknown> = {}): SynthesizedApp & { template: Template } {
  const built = buildApp(context);
  return { ...built, template: Template.fromStack(built.stack) };
}

/**
 * When the source checks run: an EventBridge schedule invoking the function
 * (`McpFunctions.sourceChecks`) weekly by default, at another rate or cron
 * expression given by `chatctx:sourceCheckSchedule`, or never (`off`). A run that
 * fails is not retried by EventBridge: the next one comes on schedule, and the
 * function's errors show on the dashboard.
 */
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';

/** The default: once a week. */
export const DEFAULT_SOURCE_CHECK_SCHEDULE = 'rate(7 days)';

export interface SourceCheckScheduleProps {
  readonly function: lambda.IFunction;
  /** `rate(…)`, `cron(…)` or `off`. @default DEFAULT_SOURCE_CHECK_SCHEDULE */
  readonly schedule?: string;
}

export class SourceCheckSchedule extends Construct {
  /** The rule, unless the schedule is `off`. */
  public readonly rule?: events.Rule;

  constructor(scope: Construct, id: string, props: SourceCheckScheduleProps) {
    super(scope, id);
    const schedule = (props.schedule ?? DEFAULT_SOURCE_CHECK_SCHEDULE).trim();
    if (schedule === 'off') return;
    if (!/^(rate|cron)\(.+\)$/.test(schedule)) throw new Error(`sourceCheckSchedule must be rate(…), cron(…) or off, got "${schedule}"`);
    this.rule = new events.Rule(this, 'Rule', {
      description: 'chatctx: check every quoted excerpt against its page',
      schedule: events.Schedule.expression(schedule),
      targets: [new targets.LambdaFunction(props.function, { retryAttempts: 0 })],
    });
  }
}

/**
 * What tells the owner that the deployment is unwell or costing more than it
 * should: one SNS topic (with an optional e-mail subscription), a few CloudWatch
 * alarms on it, one dashboard, and an optional monthly cost budget.
 *
 * Every alarm is billed per metric it reads (USD 0.10 a month each), so there are
 * five alarms reading 14 metrics, about USD 1.40 a month:
 * - the stage's 5XXError: a client got a server error;
 * - the request-path functions' Errors and Throttles (gateway and the three tools),
 *   summed in one metric-math alarm: any of them means an MCP call failed, one
 *   notification is easier to act on than eight, and the dashboard shows which
 *   function it was;
 * - Aurora ServerlessDatabaseCapacity above 0 ACU for six hours while the API had
 *   almost no requests: the cluster should pause when idle (`minCapacity` 0), so
 *   something is keeping it awake (only when `minCapacity` is 0);
 * - throttled GetItem/UpdateItem on the quota table: the gateway cannot count calls;
 * - OAuth security events from the gateway (replayed codes and refresh tokens,
 *   invalid grants, refused consent forms, throttled addresses, metadata documents
 *   refused as SSRF, the registration cap) above `OAUTH_ABUSE_EVENTS` in five
 *   minutes: a person mistypes or a token expires now and then, an attack does
 *   this many; the gateway's log lines say which (`security_event`).
 *
 * It does not watch admin or migrate: the owner runs admin and sees its answer, and
 * a failing migrate fails the deploy.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import * as budgets from 'aws-cdk-lib/aws-budgets';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import type { Database } from './database.ts';
import type { McpApi } from './mcp-api.ts';
import type { QuotaTable } from './quota-table.ts';
import { GATEWAY_SERVICE, METRICS_NAMESPACE, OAUTH_SECURITY_EVENT_METRIC } from '../lambdas/observability/metric-names.ts';

/** Hours the cluster may stay above 0 ACU on an idle API before the alarm fires. */
export const AWAKE_WHILE_IDLE_HOURS = 6;
/**
 * Fewer API requests than this in an hour count as idle. Aurora pauses after five
 * minutes without a connection, so a request every five minutes keeps it awake.
 */
export const IDLE_REQUESTS_PER_HOUR = 12;
/** OAuth security events in five minutes that look like an attack rather than mistakes. */
export const OAUTH_ABUSE_EVENTS = 50;

export interface OperationsProps {
  /** The public API (its stage's metrics). */
  readonly api: McpApi;
  /** The functions on the request path, by name: gateway and the three tools. */
  readonly requestPathFunctions: Readonly<Record<string, lambda.IFunction>>;
  /** The database (its capacity). */
  readonly database: Database;
  /** Whether the cluster may pause (minimum capacity 0); the idle alarm needs it. */
  readonly canPause: boolean;
  /** The quota table (its throttles). */
  readonly quotaTable: QuotaTable;

  /**
   * Where alarm and budget notifications are e-mailed; SNS asks the address to
   * confirm the subscription first.
   *
   * @default - no subscription: subscribe to the topic yourself
   */
  readonly alarmEmail?: string;

  /**
   * A monthly cost budget for the account, in USD: notifications at 80% of the
   * actual cost and at 100% of the forecast.
   *
   * @default - no budget
   */
  readonly monthlyBudgetUsd?: number;
}

export class Operations extends Construct {
  /** Where alarms and budget notifications go. */
  public readonly topic: sns.Topic;
  /** The alarms, by name. */
  public readonly alarms: Readonly<Record<'apiServerErrors' | 'functionErrors' | 'databaseAwakeWhileIdle' | 'quotaThrottles' | 'oauthAbuse', cloudwatch.Alarm | undefined>>;
  /** The dashboard. */
  public readonly dashboard: cloudwatch.Dashboard;
  /** The monthly cost budget, if asked for. */
  public readonly budget?: budgets.CfnBudget;

  constructor(scope: Construct, id: string, props: OperationsProps) {
    super(scope, id);
    validate(props);
    this.topic = this.notificationTopic(props.alarmEmail);
    const metrics = new OperationsMetrics(props);

    this.alarms = {
      apiServerErrors: new cloudwatch.Alarm(this, 'ApiServerErrors', {
        alarmDescription: 'chatctx: the API answered 5xx (a client got a server error)',
        metric: metrics.serverErrors,
        threshold: 5,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      functionErrors: new cloudwatch.Alarm(this, 'FunctionErrors', {
        alarmDescription: 'chatctx: a request-path function failed or was throttled (see the dashboard for which)',
        metric: metrics.requestPathFailures(),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      databaseAwakeWhileIdle: props.canPause ? this.awakeWhileIdleAlarm(metrics) : undefined,
      quotaThrottles: new cloudwatch.Alarm(this, 'QuotaThrottles', {
        alarmDescription: 'chatctx: DynamoDB throttled the quota counters (the gateway cannot count tool calls)',
        metric: metrics.quotaThrottles,
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      oauthAbuse: new cloudwatch.Alarm(this, 'OAuthAbuse', {
        alarmDescription: `chatctx: ${OAUTH_ABUSE_EVENTS} or more OAuth security events in 5 minutes (the gateway's log lines with security_event say which)`,
        metric: metrics.oauthSecurityEvents,
        threshold: OAUTH_ABUSE_EVENTS,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    };
    const notify = new actions.SnsAction(this.topic);
    for (const alarm of Object.values(this.alarms)) {
      alarm?.addAlarmAction(notify);
      alarm?.addOkAction(notify);
    }
    this.allowAlarmsToPublish();

    this.dashboard = this.buildDashboard(metrics);
    if (props.monthlyBudgetUsd !== undefined) this.budget = this.costBudget(props.monthlyBudgetUsd);
  }

  private notificationTopic(alarmEmail: string | undefined): sns.Topic {
    // Not KMS-encrypted: CloudWatch alarms cannot publish to a topic under the
    // AWS-managed SNS key, and a customer-managed key costs USD 1 a month; the
    // messages are alarm state changes and budget amounts, no request data.
    const topic = new sns.Topic(this, 'Topic', { displayName: 'chatctx alarms', enforceSSL: true });
    if (alarmEmail) topic.addSubscription(new subscriptions.EmailSubscription(alarmEmail));
    return topic;
  }

  /**
   * The topic's policy replaces SNS's default one (the TLS-only Deny makes it
   * explicit), so CloudWatch may publish only because this says so: these alarms
   * of this account, nothing else.
   */
  private allowAlarmsToPublish(): void {
    const alarms = Object.values(this.alarms).filter((alarm): alarm is cloudwatch.Alarm => alarm !== undefined);
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'CloudWatchAlarmsPublish',
        actions: ['sns:Publish'],
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        resources: [this.topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': Stack.of(this).account },
          ArnEquals: { 'aws:SourceArn': alarms.map((alarm) => alarm.alarmArn) },
        },
      }),
    );
  }

  private awakeWhileIdleAlarm(metrics: OperationsMetrics): cloudwatch.Alarm {
    return new cloudwatch.Alarm(this, 'DatabaseAwakeWhileIdle', {
      alarmDescription:
        `chatctx: Aurora stayed above 0 ACU for ${AWAKE_WHILE_IDLE_HOURS} hours while the API had fewer than ` +
        `${IDLE_REQUESTS_PER_HOUR} requests an hour; something keeps the cluster from pausing`,
      metric: metrics.awakeWhileIdle(),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: AWAKE_WHILE_IDLE_HOURS,
      datapointsToAlarm: AWAKE_WHILE_IDLE_HOURS,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  private buildDashboard(metrics: OperationsMetrics): cloudwatch.Dashboard {
    const dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { defaultInterval: Duration.days(1) });
    const graph = (title: string, left: cloudwatch.IMetric[]) => new cloudwatch.GraphWidget({ title, left, width: 12 });
    dashboard.addWidgets(
      new cloudwatch.AlarmStatusWidget({
        title: 'Alarms',
        alarms: Object.values(this.alarms).filter((alarm): alarm is cloudwatch.Alarm => alarm !== undefined),
        width: 24,
      }),
    );
    dashboard.addWidgets(
      graph('API requests and errors', [metrics.requests, metrics.clientErrors, metrics.serverErrors]),
      graph('API latency (p50, p99)', [metrics.latency('p50'), metrics.latency('p99')]),
    );
    dashboard.addWidgets(
      graph('Function errors', metrics.perFunction('Errors')),
      graph('Function throttles', metrics.perFunction('Throttles')),
    );
    dashboard.addWidgets(
      graph('Aurora capacity (ACU)', [metrics.capacity('Maximum')]),
      graph('Quota table throttles', [metrics.quotaThrottles]),
    );
    dashboard.addWidgets(graph('OAuth security events', [metrics.oauthSecurityEvents]));
    return dashboard;
  }

  private costBudget(amount: number): budgets.CfnBudget {
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        actions: ['sns:Publish'],
        principals: [new iam.ServicePrincipal('budgets.amazonaws.com')],
        resources: [this.topic.topicArn],
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    );
    const subscribers = [{ subscriptionType: 'SNS', address: this.topic.topicArn }];
    const notification = (notificationType: 'ACTUAL' | 'FORECASTED', threshold: number) => ({
      notification: { notificationType, comparisonOperator: 'GREATER_THAN', threshold, thresholdType: 'PERCENTAGE' },
      subscribers,
    });
    return new budgets.CfnBudget(this, 'Budget', {
      budget: {
        budgetType: 'COST',
        timeUnit: 'MONTHLY',
        budgetLimit: { amount, unit: 'USD' },
      },
      notificationsWithSubscribers: [notification('ACTUAL', 80), notification('FORECASTED', 100)],
    });
  }
}

/** The metrics the alarms and the dashboard read, in one place. */
class OperationsMetrics {
  readonly requests: cloudwatch.Metric;
  readonly clientErrors: cloudwatch.Metric;
  readonly serverErrors: cloudwatch.Metric;
  readonly quotaThrottles: cloudwatch.IMetric;
  readonly oauthSecurityEvents: cloudwatch.Metric;

  constructor(private readonly props: OperationsProps) {
    const stage = props.api.stage;
    const fiveMinutes = { period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM };
    this.requests = stage.metricCount({ ...fiveMinutes, label: 'requests' });
    this.clientErrors = stage.metricClientError({ ...fiveMinutes, label: '4xx' });
    this.serverErrors = stage.metricServerError({ ...fiveMinutes, label: '5xx' });
    this.quotaThrottles = props.quotaTable.table.metricThrottledRequestsForOperations({
      operations: [dynamodb.Operation.GET_ITEM, dynamodb.Operation.UPDATE_ITEM],
      period: Duration.minutes(5),
      label: 'throttled GetItem + UpdateItem',
    });
    this.oauthSecurityEvents = new cloudwatch.Metric({
      namespace: METRICS_NAMESPACE,
      metricName: OAUTH_SECURITY_EVENT_METRIC,
      dimensionsMap: { service: GATEWAY_SERVICE },
      ...fiveMinutes,
      label: 'OAuth security events',
    });
  }

  latency(statistic: string): cloudwatch.Metric {
    return this.props.api.stage.metricLatency({ period: Duration.minutes(5), statistic, label: statistic });
  }

  capacity(statistic: string): cloudwatch.Metric {
    return this.props.database.cluster.metricServerlessDatabaseCapacity({ period: Duration.hours(1), statistic, label: `ACU (${statistic})` });
  }

  perFunction(metricName: 'Errors' | 'Throttles'): cloudwatch.Metric[] {
    return Object.entries(this.props.requestPathFunctions).map(([name, fn]) =>
      fn.metric(metricName, { period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM, label: name }),
    );
  }

  /** Errors plus throttles of every request-path function, per 5 minutes. */
  requestPathFailures(): cloudwatch.MathExpression {
    const usingMetrics: Record<string, cloudwatch.IMetric> = {};
    const errors = this.perFunction('Errors');
    const throttles = this.perFunction('Throttles');
    [...errors, ...throttles].forEach((metric, index) => {
      usingMetrics[`m${index}`] = metric;
    });
    return new cloudwatch.MathExpression({
      expression: `SUM([${Object.keys(usingMetrics).join(',')}])`,
      usingMetrics,
      period: Duration.minutes(5),
      label: 'errors + throttles',
    });
  }

  /** 1 for an hour in which the cluster never paused although the API was idle, else 0. */
  awakeWhileIdle(): cloudwatch.MathExpression {
    return new cloudwatch.MathExpression({
      expression: `IF(capacity > 0 AND FILL(requests, 0) < ${IDLE_REQUESTS_PER_HOUR}, 1, 0)`,
      usingMetrics: {
        capacity: this.capacity('Minimum'),
        requests: this.props.api.stage.metricCount({ period: Duration.hours(1), statistic: cloudwatch.Stats.SUM }),
      },
      period: Duration.hours(1),
      label: 'awake while idle',
    });
  }
}

function validate(props: OperationsProps): void {
  if (props.alarmEmail !== undefined && !/^[^@\s,]+@[^@\s,]+\.[^@\s,]+$/.test(props.alarmEmail)) {
    throw new Error(`alarmEmail must be one e-mail address, got "${props.alarmEmail}"`);
  }
  const amount = props.monthlyBudgetUsd;
  if (amount !== undefined && !(Number.isFinite(amount) && amount > 0)) {
    throw new Error(`monthlyBudgetUsd must be a positive amount of US dollars, got ${amount}`);
  }
}

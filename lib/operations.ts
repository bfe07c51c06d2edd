/**
 * What tells the owner that the deployment is unwell or costing more than it
 * should: one SNS topic (with an optional e-mail subscription), four CloudWatch
 * alarms on it, a monthly cost budget and a Cost Anomaly Detection alert (both on
 * by default, and free), and, if asked for, a dashboard.
 *
 * Every alarm is billed per metric it reads (USD 0.10 a month each), so the four
 * alarms read five metrics, USD 0.50 a month:
 * - the stage's 5XXError: a client got a server error (a gateway that crashed,
 *   timed out or was throttled shows here too: API Gateway answers 5xx for it);
 * - `request_path_failure`, which the gateway and the three tools publish for each
 *   error-level log line: a tool that failed, could not be invoked or was throttled,
 *   a quota counter that failed, a request that ended in a 500. One metric instead
 *   of each function's Errors and Throttles (eight metrics, USD 0.80), and it also
 *   sees a tool's internal error, which the tool answers as a tool error rather than
 *   failing its invocation; the log line says which function and why;
 * - Aurora ServerlessDatabaseCapacity above 0 ACU for six hours while the API had
 *   almost no requests: the cluster should pause when idle (`minCapacity` 0), so
 *   something is keeping it awake (only when `minCapacity` is 0);
 * - OAuth security events from the gateway (replayed codes and refresh tokens,
 *   invalid grants, refused consent forms, throttled addresses, metadata documents
 *   refused as SSRF, the registration cap) above `OAUTH_ABUSE_EVENTS` in five
 *   minutes: a person mistypes or a token expires now and then, an attack does
 *   this many; the gateway's log lines say which (`security_event`).
 *
 * Custom metrics cost USD 0.30 a month for each hour-by-hour month they are
 * published in; the failure and OAuth metrics are published only when something
 * happens, so an idle stack publishes none. Names carry the stack's name (alarms,
 * dashboard, the `stack` metric dimension), so two stacks in one account and region
 * never read or notify each other.
 *
 * It does not watch admin or migrate: the owner runs admin and sees its answer, and
 * a failing migrate fails the deploy.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import * as budgets from 'aws-cdk-lib/aws-budgets';
import * as ce from 'aws-cdk-lib/aws-ce';
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
import {
  GATEWAY_SERVICE,
  METRICS_NAMESPACE,
  OAUTH_SECURITY_EVENT_METRIC,
  REQUEST_PATH_FAILURE_METRIC,
  REQUEST_PATH_SERVICE,
} from '../lambdas/observability/metric-names.ts';

/** Hours the cluster may stay above 0 ACU on an idle API before the alarm fires. */
export const AWAKE_WHILE_IDLE_HOURS = 6;
/**
 * Fewer API requests than this in an hour count as idle. Aurora pauses after five
 * minutes without a connection, so a request every five minutes keeps it awake.
 */
export const IDLE_REQUESTS_PER_HOUR = 12;
/** OAuth security events in five minutes that look like an attack rather than mistakes. */
export const OAUTH_ABUSE_EVENTS = 50;
/** The monthly budget when the context sets none: the default configuration's cost at 100k calls, doubled. */
export const DEFAULT_MONTHLY_BUDGET_USD = 30;
/** A cost anomaly whose total impact reaches this many US dollars is e-mailed. */
export const DEFAULT_COST_ANOMALY_USD = 10;

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
   * actual cost and at 100% of the forecast. 0 creates none.
   *
   * @default DEFAULT_MONTHLY_BUDGET_USD
   */
  readonly monthlyBudgetUsd?: number;

  /**
   * Cost Anomaly Detection: an AWS services monitor and an alert to the topic for
   * an anomaly whose total impact reaches this many USD. 0 creates neither (an
   * account that already has an AWS services monitor).
   *
   * @default DEFAULT_COST_ANOMALY_USD
   */
  readonly costAnomalyUsd?: number;

  /**
   * Whether to build the dashboard. An account's first three dashboards are free,
   * each one after that costs USD 3.00 a month.
   *
   * @default false
   */
  readonly dashboard?: boolean;
}

export class Operations extends Construct {
  /** Where alarms and budget notifications go. */
  public readonly topic: sns.Topic;
  /** The alarms, by name. */
  public readonly alarms: Readonly<Record<'apiServerErrors' | 'requestPathFailures' | 'databaseAwakeWhileIdle' | 'oauthAbuse', cloudwatch.Alarm | undefined>>;
  /** The dashboard, if asked for. */
  public readonly dashboard?: cloudwatch.Dashboard;
  /** The monthly cost budget, unless turned off. */
  public readonly budget?: budgets.CfnBudget;
  /** The cost anomaly monitor, unless turned off. */
  public readonly anomalyMonitor?: ce.CfnAnomalyMonitor;

  constructor(scope: Construct, id: string, props: OperationsProps) {
    super(scope, id);
    validate(props);
    this.topic = this.notificationTopic(props.alarmEmail);
    const metrics = new OperationsMetrics(props);

    const stackName = Stack.of(this).stackName;
    const alarm = (id: string, props: Omit<cloudwatch.AlarmProps, 'alarmName' | 'comparisonOperator' | 'treatMissingData'>) =>
      new cloudwatch.Alarm(this, id, {
        alarmName: `${stackName}-${id}`,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        ...props,
      });
    this.alarms = {
      apiServerErrors: alarm('ApiServerErrors', {
        alarmDescription: 'chatctx: the API answered 5xx (a client got a server error)',
        metric: metrics.serverErrors,
        threshold: 5,
        evaluationPeriods: 1,
      }),
      requestPathFailures: alarm('RequestPathFailures', {
        alarmDescription:
          'chatctx: the gateway or a tool logged an error (a tool failed, could not be invoked or was throttled, a quota counter failed); ' +
          'the error lines in their logs say which',
        metric: metrics.requestPathFailures,
        threshold: 1,
        evaluationPeriods: 1,
      }),
      databaseAwakeWhileIdle: props.canPause
        ? alarm('DatabaseAwakeWhileIdle', {
            alarmDescription:
              `chatctx: Aurora stayed above 0 ACU for ${AWAKE_WHILE_IDLE_HOURS} hours while the API had fewer than ` +
              `${IDLE_REQUESTS_PER_HOUR} requests an hour; something keeps the cluster from pausing`,
            metric: metrics.awakeWhileIdle(),
            threshold: 1,
            evaluationPeriods: AWAKE_WHILE_IDLE_HOURS,
            datapointsToAlarm: AWAKE_WHILE_IDLE_HOURS,
          })
        : undefined,
      oauthAbuse: alarm('OAuthAbuse', {
        alarmDescription: `chatctx: ${OAUTH_ABUSE_EVENTS} or more OAuth security events in 5 minutes (the gateway's log lines with security_event say which)`,
        metric: metrics.oauthSecurityEvents,
        threshold: OAUTH_ABUSE_EVENTS,
        evaluationPeriods: 1,
      }),
    };
    const notify = new actions.SnsAction(this.topic);
    for (const each of Object.values(this.alarms)) {
      each?.addAlarmAction(notify);
      each?.addOkAction(notify);
    }
    this.allowAlarmsToPublish();

    if (props.dashboard) this.dashboard = this.buildDashboard(metrics, stackName);
    const budget = props.monthlyBudgetUsd ?? DEFAULT_MONTHLY_BUDGET_USD;
    if (budget > 0) this.budget = this.costBudget(budget);
    const anomaly = props.costAnomalyUsd ?? DEFAULT_COST_ANOMALY_USD;
    if (anomaly > 0) this.anomalyMonitor = this.costAnomalyAlert(anomaly, stackName);
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
    this.allowServiceToPublish('cloudwatch.amazonaws.com', 'CloudWatchAlarmsPublish', { ArnEquals: { 'aws:SourceArn': alarms.map((alarm) => alarm.alarmArn) } });
  }

  private buildDashboard(metrics: OperationsMetrics, stackName: string): cloudwatch.Dashboard {
    const dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { dashboardName: stackName, defaultInterval: Duration.days(1) });
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
    dashboard.addWidgets(
      graph('OAuth security events', [metrics.oauthSecurityEvents]),
      graph('Request-path failures (error log lines)', [metrics.requestPathFailures]),
    );
    return dashboard;
  }

  /**
   * An AWS services anomaly monitor with an immediate alert to the topic. Cost
   * Anomaly Detection is free; it learns the account's spend for about ten days
   * before it reports anything.
   */
  private costAnomalyAlert(thresholdUsd: number, stackName: string): ce.CfnAnomalyMonitor {
    this.allowServiceToPublish('costalerts.amazonaws.com', 'CostAnomalyAlertsPublish');
    const monitor = new ce.CfnAnomalyMonitor(this, 'CostAnomalyMonitor', {
      monitorName: `${stackName} services`,
      monitorType: 'DIMENSIONAL',
      monitorDimension: 'SERVICE',
    });
    const subscription = new ce.CfnAnomalySubscription(this, 'CostAnomalyAlert', {
      subscriptionName: `${stackName} cost anomalies`,
      monitorArnList: [monitor.attrMonitorArn],
      // Alerts to SNS must be immediate; e-mail subscribers of the topic get them.
      frequency: 'IMMEDIATE',
      subscribers: [{ type: 'SNS', address: this.topic.topicArn }],
      thresholdExpression: JSON.stringify({
        Dimensions: { Key: 'ANOMALY_TOTAL_IMPACT_ABSOLUTE', MatchOptions: ['GREATER_THAN_OR_EQUAL'], Values: [String(thresholdUsd)] },
      }),
    });
    // Cost Anomaly Detection checks that it may publish when the alert is created.
    const policy = this.topic.node.tryFindChild('Policy');
    if (policy) subscription.node.addDependency(policy);
    return monitor;
  }

  /** Lets an AWS service publish to the topic on behalf of this account only (and `conditions` besides). */
  private allowServiceToPublish(service: string, sid: string, conditions: Record<string, unknown> = {}): void {
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid,
        actions: ['sns:Publish'],
        principals: [new iam.ServicePrincipal(service)],
        resources: [this.topic.topicArn],
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account }, ...conditions },
      }),
    );
  }

  private costBudget(amount: number): budgets.CfnBudget {
    this.allowServiceToPublish('budgets.amazonaws.com', 'BudgetsPublish');
    const subscribers = [{ subscriptionType: 'SNS', address: this.topic.topicArn }];
    const notification = (notificationType: 'ACTUAL' | 'FORECASTED', threshold: number) => ({
      notification: { notificationType, comparisonOperator: 'GREATER_THAN', threshold, thresholdType: 'PERCENTAGE' },
      subscribers,
    });
    return new budgets.CfnBudget(this, 'Budget', {
      budget: {
        budgetName: `${Stack.of(this).stackName} monthly cost`,
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
  readonly requestPathFailures: cloudwatch.Metric;

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
    // The functions publish these with the stack's name as a dimension (CHATCTX_STACK_NAME).
    const stack = Stack.of(props.api).stackName;
    this.oauthSecurityEvents = new cloudwatch.Metric({
      namespace: METRICS_NAMESPACE,
      metricName: OAUTH_SECURITY_EVENT_METRIC,
      dimensionsMap: { service: GATEWAY_SERVICE, stack },
      ...fiveMinutes,
      label: 'OAuth security events',
    });
    this.requestPathFailures = new cloudwatch.Metric({
      namespace: METRICS_NAMESPACE,
      metricName: REQUEST_PATH_FAILURE_METRIC,
      dimensionsMap: { service: REQUEST_PATH_SERVICE, stack },
      ...fiveMinutes,
      label: 'request-path failures',
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
  if (amount !== undefined && !(Number.isFinite(amount) && amount >= 0)) {
    throw new Error(`monthlyBudgetUsd must be an amount of US dollars (0 for no budget), got ${amount}`);
  }
  const anomaly = props.costAnomalyUsd;
  if (anomaly !== undefined && !(Number.isFinite(anomaly) && anomaly >= 0)) {
    throw new Error(`costAnomalyUsd must be an amount of US dollars (0 for no anomaly alert), got ${anomaly}`);
  }
}

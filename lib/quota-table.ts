/**
 * The DynamoDB table behind the gateway's daily quota counters: one item per
 * (subject, UTC day), incremented by one conditional `UpdateItem` per tool call and
 * expired by TTL. The item layout belongs to the DynamoDB quota store; this
 * construct only fixes the key (`pk`, a string) and the TTL attribute.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';

import { PARTITION_KEY as QUOTA_PARTITION_KEY, EXPIRES_AT_ATTRIBUTE as QUOTA_TTL_ATTRIBUTE } from '../lambdas/quota/dynamo-quota-store.ts';

// The key and TTL attribute names come from the store that reads and writes them, so they cannot drift.
export { QUOTA_PARTITION_KEY, QUOTA_TTL_ATTRIBUTE };

export interface QuotaTableProps {
  /**
   * What happens to the table when it leaves the stack. The counters are rebuilt by
   * use within a day, so losing them costs at most one day of quota.
   *
   * @default RemovalPolicy.DESTROY
   */
  readonly removalPolicy?: RemovalPolicy;
}

export class QuotaTable extends Construct {
  /** The table. */
  public readonly table: dynamodb.Table;

  constructor(scope: Construct, id: string, props: QuotaTableProps = {}) {
    super(scope, id);
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: QUOTA_PARTITION_KEY, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: QUOTA_TTL_ATTRIBUTE,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.DESTROY,
    });
  }

  /** Lets `grantee` read and atomically update counters, and nothing else (no scan, no delete). */
  public grantCounterAccess(grantee: iam.IGrantable): iam.Grant {
    return iam.Grant.addToPrincipal({
      grantee,
      actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
      resourceArns: [this.table.tableArn],
    });
  }
}

/**
 * CloudFormation custom resource events for the migrate function, as the CDK
 * Provider framework hands them on: Create with properties, Update with the new
 * and the old ones (a rollback swaps them), Delete.
 */
import type { CloudFormationCustomResourceCreateEvent, CloudFormationCustomResourceDeleteEvent, CloudFormationCustomResourceUpdateEvent } from 'aws-lambda';

const ENVELOPE = {
  ServiceToken: 'arn:aws:lambda:us-east-1:123456789012:function:chatctx-MigrationsProviderframeworkonEvent',
  ResponseURL: 'https://cloudformation-custom-resource-response-useast1.s3.amazonaws.com/response',
  StackId: 'arn:aws:cloudformation:us-east-1:123456789012:stack/chatctx/00000000-0000-0000-0000-000000000000',
  RequestId: 'request',
  LogicalResourceId: 'MigrationsResource',
  ResourceType: 'Custom::ChatctxMigrations',
};

type Properties = Record<string, unknown>;
const withToken = (properties: Properties) => ({ ServiceToken: ENVELOPE.ServiceToken, ...properties });

export const createEvent = (properties: Properties): CloudFormationCustomResourceCreateEvent => ({
  ...ENVELOPE,
  RequestType: 'Create',
  ResourceProperties: withToken(properties),
});

export const updateEvent = (properties: Properties, oldProperties: Properties): CloudFormationCustomResourceUpdateEvent => ({
  ...ENVELOPE,
  RequestType: 'Update',
  PhysicalResourceId: 'chatctx-schema',
  ResourceProperties: withToken(properties),
  OldResourceProperties: withToken(oldProperties),
});

export const deleteEvent = (properties: Properties): CloudFormationCustomResourceDeleteEvent => ({
  ...ENVELOPE,
  RequestType: 'Delete',
  PhysicalResourceId: 'chatctx-schema',
  ResourceProperties: withToken(properties),
});

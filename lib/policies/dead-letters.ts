import * as sqs from 'aws-cdk-lib/aws-sqs';

/**
 * What every dead-letter queue of the stack carries: a RedriveAllowPolicy, which is how a queue says it is a
 * dead-letter queue. Control Tower's CT.SQS.PR.1 ("Require any Amazon SQS queue to have a dead-letter queue
 * configured", https://docs.aws.amazon.com/controltower/latest/controlreference/sqs-rules.html) "applies only to Amazon
 * SQS queues that are not configured as a dead-letter queue with a RedriveAllowPolicy property": its rule skips a queue
 * whose redrivePermission is allowAll or byQueue, and fails one with denyAll and no dead-letter queue of its own.
 *
 * allowAll, which is also what SQS assumes without the property, rather than byQueue: byQueue names the source queues'
 * ARNs in the dead-letter queue while each source queue's RedrivePolicy names the dead-letter queue's, a circular
 * reference CloudFormation refuses; it takes at most 10 ARNs where the connections' queues are not bounded; and the
 * Scheduler's and Lambda's dead-letter queues have no SQS source queue at all (they receive by SendMessage, which the
 * policy does not govern).
 */
export const DEAD_LETTER_QUEUE = {
  redriveAllowPolicy: { redrivePermission: sqs.RedrivePermission.ALLOW_ALL },
} as const satisfies sqs.QueueProps;

import * as z from 'zod';
import { ConfigurationError } from '../core/errors.js';
import { parseLocalDateTime, type LocalDateTime } from '../core/time/window.js';

/**
 * What invokes the fetch function, validated before anything else runs:
 *
 * - an EventBridge Scheduler firing: `{"reportId": "transactions", "connection": "acme", "scheduledTime": "2026-11-21T00:15:00Z"}`
 *   (the stack's schedule input; `scheduledTime` is <aws.scheduler.scheduled-time>, the same for every retry
 *   of one firing). A missing scheduledTime (someone invoking by hand with just the report) falls back to the
 *   invocation time, and the run logs that it did;
 * - a backfill request: `{"reportId": "transactions", "connection": "acme", "from": "2026-11-01", "to": "2026-11-08"}`,
 *   from inclusive and to exclusive, wall-clock dates or date-times in the report's time zone.
 *
 * Both name a feed: the report and one of its connections (connections/feed.ts). `connection` may be left out for a
 * report over one connection (an event written before feeds, or by hand); the run resolves it (ReportCatalog.feed).
 *
 * Unknown fields are refused, so a typo ("form") fails loudly instead of silently meaning "scheduled run".
 *
 * The stack's keep-alive (`{"keepAlive": true}`, once a day in `network` mode) is no run: the handler tells it apart
 * first (isKeepAlive) and answers it without fetching, so it is not a FetchRequest and no SQS message may carry it.
 */

const reportId = z.string().min(1, 'must name a report definition (config/reports/)');
const connection = z.string().min(1, "must name one of the report's connections").optional();

const scheduledEvent = z
  .object({
    reportId,
    connection,
    scheduledTime: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 instant such as "2026-11-21T00:15:00Z"' }).optional(),
  })
  .strict();

const localDateTime = z.string().transform((text, ctx) => {
  try {
    return parseLocalDateTime(text);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: (e as Error).message });
    return z.NEVER;
  }
});

const backfillEvent = z.object({ reportId, connection, from: localDateTime, to: localDateTime }).strict();

/** The feed a request names; `connection` absent only for a report over one connection. */
interface RequestedFeed {
  reportId: string;
  connection?: string;
}

export type FetchRequest =
  | ({ kind: 'scheduled'; scheduledTime: Date | undefined } & RequestedFeed)
  | ({ kind: 'backfill'; from: LocalDateTime; to: LocalDateTime } & RequestedFeed);

const SHAPES =
  'Expected a Scheduler invocation {"reportId", "connection", "scheduledTime"} or a backfill request {"reportId", "connection", "from", "to"} ' +
  '(dates YYYY-MM-DD or date-times YYYY-MM-DDTHH:mm:ss in the report\'s time zone; from inclusive, to exclusive).';

/** Validates the invocation event; the ConfigurationError names every bad field and the two accepted shapes. */
export function parseFetchEvent(event: unknown): FetchRequest {
  const isObject = event !== null && typeof event === 'object' && !Array.isArray(event);
  // Either date decides the shape, so {"reportId", "from"} is told it lacks "to", not that "from" is unknown.
  const backfill = isObject && ('from' in event || 'to' in event);
  const parsed = backfill ? backfillEvent.safeParse(event) : scheduledEvent.safeParse(event);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(event)'}: ${i.message}`);
    throw new ConfigurationError(`The fetch function's event is invalid (${problems.join('; ')}). ${SHAPES}`);
  }
  const data = parsed.data;
  const feed = { reportId: data.reportId, ...(data.connection !== undefined ? { connection: data.connection } : {}) };
  if ('from' in data) return { kind: 'backfill', ...feed, from: data.from, to: data.to };
  return { kind: 'scheduled', ...feed, scheduledTime: data.scheduledTime ? new Date(data.scheduledTime) : undefined };
}

/**
 * What the stack's keep-alive schedule sends (lib/constructs/fetch.ts): a function in a VPC that remains idle for
 * consecutive weeks loses its network interfaces and turns Inactive, and its next invocation fails with
 * ResourceNotReadyException (https://docs.aws.amazon.com/lambda/latest/dg/configuration-vpc.html, "Lambda Hyperplane
 * ENIs"; https://docs.aws.amazon.com/lambda/latest/dg/functions-states.html). Any invocation counts as activity.
 */
export const KEEP_ALIVE_EVENT = { keepAlive: true } as const;
export type KeepAliveEvent = typeof KEEP_ALIVE_EVENT;

const keepAliveEvent = z.object({ keepAlive: z.literal(true, { message: 'must be true' }) }).strict();

/**
 * Whether a direct invocation is the keep-alive. Any object with "keepAlive" is read as one, so
 * {"keepAlive": true, "reportId": "…"} is refused rather than run or silently ignored.
 */
export function isKeepAlive(event: unknown): event is KeepAliveEvent {
  if (event === null || typeof event !== 'object' || Array.isArray(event) || !('keepAlive' in event)) return false;
  const parsed = keepAliveEvent.safeParse(event);
  if (parsed.success) return true;
  const problems = parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(event)'}: ${i.message}`);
  throw new ConfigurationError(
    `The fetch function's keep-alive event is invalid (${problems.join('; ')}): the stack's keep-alive schedule sends exactly ${JSON.stringify(KEEP_ALIVE_EVENT)}, nothing else.`,
  );
}

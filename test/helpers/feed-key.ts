import { DEFAULT_CONNECTION } from '../../functions/core/connections/connection.js';
import type { FeedKey } from '../../functions/core/connections/feed.js';

/** A feed as the tests name one: a report over `connection`, `default` unless said (a definition without "connections"). */
export const feedKey = (reportId: string, connection: string = DEFAULT_CONNECTION): FeedKey => ({ reportId, connection });

/**
 * Log levels and Lambda's application log filter. With the JSON log format Lambda drops every line below the
 * function's ApplicationLogLevel, and files a line without a `level` field as INFO ("Log-level filtering", AWS
 * Lambda developer guide). Powertools' metric lines (CloudWatch embedded metric format) carry no level, so a
 * filter stricter than INFO drops them, the metrics never exist, and every alarm on them stays silent.
 * No module here loads aws-cdk-lib: the environment schema (lib/environment/environments.ts) reads this too.
 */

/** Lambda's application log levels, most detailed first (LoggingConfig.ApplicationLogLevel). */
export const LAMBDA_APPLICATION_LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'] as const;
export type LambdaApplicationLogLevel = (typeof LAMBDA_APPLICATION_LOG_LEVELS)[number];

/** The level Lambda gives a line that has none: every metric line. */
export const UNLEVELLED_LINE_LEVEL: LambdaApplicationLogLevel = 'INFO';

/** Whether Lambda's filter at `filter` lets a line of level `line` through. */
export const passesLambdaFilter = (line: LambdaApplicationLogLevel, filter: LambdaApplicationLogLevel): boolean =>
  LAMBDA_APPLICATION_LOG_LEVELS.indexOf(line) >= LAMBDA_APPLICATION_LOG_LEVELS.indexOf(filter);

/** The levels Powertools' Logger and an environment's logLevel speak of. */
const LOGGER_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR'] as const;

/**
 * The logLevel values an environment may set: those at which a metric line still passes. Not WARN or ERROR: a
 * filter there would silence every alarm; and Lambda's filter cannot stay at INFO while ours is stricter, because
 * Powertools' Logger takes Lambda's level (AWS_LAMBDA_LOG_LEVEL) over POWERTOOLS_LOG_LEVEL whenever Lambda sets one.
 */
export const LOG_LEVELS = LOGGER_LEVELS.filter((l) => passesLambdaFilter(UNLEVELLED_LINE_LEVEL, l)) as ReadonlyArray<'DEBUG' | 'INFO'>;
export type LogLevel = 'DEBUG' | 'INFO';

export const LOG_LEVEL_REFUSAL =
  `must be one of ${LOG_LEVELS.join(', ')}: at a stricter level Lambda's log filter drops the metric lines every alarm ` +
  'reads (they carry no level, so Lambda files them as INFO), and no alarm could fire. The pipeline writes a few INFO lines per window.';

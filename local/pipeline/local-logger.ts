import { Logger, LogLevel } from '@aws-lambda-powertools/logger';
import { serviceName } from '../../functions/aws/service-name.js';
import { redactingReplacer } from '../../functions/aws/redact.js';

/**
 * The handlers' logger for local runs: the same Powertools JSON lines with the same redaction, but silent
 * unless POWERTOOLS_LOG_LEVEL asks (e.g. POWERTOOLS_LOG_LEVEL=INFO npm start), so the run's printed
 * summary stays readable. Failures still reach the terminal through the summary, with their typed message.
 */
export function localLogger(): Logger {
  const asked = process.env.POWERTOOLS_LOG_LEVEL?.toUpperCase();
  const level = asked && asked in LogLevel ? (asked as keyof typeof LogLevel) : 'SILENT';
  return new Logger({ serviceName, jsonReplacerFn: redactingReplacer, logLevel: level });
}

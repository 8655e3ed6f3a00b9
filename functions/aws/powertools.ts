import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { METRIC_NAMESPACE } from './metrics.js';
import { redactingReplacer } from './redact.js';
import { serviceName } from './service-name.js';

/**
 * The one Logger, Metrics and Tracer of a function, shared by every module of its bundle (the pattern of
 * Powertools' examples/app `commons/powertools`). Created at module load so the Lambda init phase pays for it once.
 *
 * Environment: POWERTOOLS_SERVICE_NAME (service-name.ts), POWERTOOLS_LOG_LEVEL, POWERTOOLS_METRICS_DISABLED (set it for
 * local runs: metrics are EMF lines on stdout), POWERTOOLS_TRACE_ENABLED. The Tracer switches itself off
 * outside Lambda.
 */

/** Masks controlKey, privateKeyPem, authorization, *signature (and PEM blocks or oauth_signature in text) at any depth. */
export const logger = new Logger({ serviceName, jsonReplacerFn: redactingReplacer });

export const metrics = new Metrics({ namespace: METRIC_NAMESPACE, serviceName });

export const tracer = new Tracer({ serviceName });

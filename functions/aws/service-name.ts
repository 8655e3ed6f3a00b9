/**
 * The `service` of every log line and metric (POWERTOOLS_SERVICE_NAME, default "paynet-reports"; give both
 * functions the same value so alarms see one `service` dimension). A module of its own so that local runs,
 * which only need the name, do not load the Tracer: the X-Ray SDK it loads turns on async hooks for the
 * whole process (cls-hooked), a callback on every promise and stream operation.
 */
export const DEFAULT_SERVICE_NAME = 'paynet-reports';
export const serviceName = process.env.POWERTOOLS_SERVICE_NAME || DEFAULT_SERVICE_NAME;

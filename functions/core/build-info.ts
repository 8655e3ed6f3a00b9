import pkg from '../../package.json' with { type: 'json' };

/**
 * What the Parquet footer's `created_by` says. parquet-java (Spark, Hive, Glue jobs, Redshift Spectrum's
 * parquet-java heritage) parses it with VersionParser's `<application> version <semver> (build <hash>)`
 * and, when it cannot, distrusts the file's byte-array statistics (CorruptStatistics) and refuses
 * DELTA_BYTE_ARRAY (PARQUET-246). So the string follows that convention exactly.
 */
export const PIPELINE_NAME = 'paynet-reports-pipeline';
export const PIPELINE_VERSION: string = pkg.version;

/**
 * The commit the code was built from: PIPELINE_BUILD_COMMIT when the deployment sets it (hex only, so it
 * cannot break the parenthesised build part), else "unknown".
 */
export function buildCommit(value: string | undefined = process.env.PIPELINE_BUILD_COMMIT): string {
  return value && /^[0-9a-f]{7,40}$/i.test(value.trim()) ? value.trim().toLowerCase() : 'unknown';
}

export function createdBy(commit: string = buildCommit()): string {
  return `${PIPELINE_NAME} version ${PIPELINE_VERSION} (build ${commit})`;
}

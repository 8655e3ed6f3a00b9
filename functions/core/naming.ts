import { ConfigurationError } from './errors.js';

/**
 * Names shared by the CDK stack and the local runner, so a local run lands in buckets named exactly
 * like the deployed ones. They live in the core because both the stack (lib/) and the command line (local/)
 * read them, and neither may import the other's side of the house.
 */

/** Lower-case letters, digits and hyphens: it becomes part of S3 bucket names (3-63 characters, no underscores). */
const ENVIRONMENT = /^[a-z][a-z0-9-]{0,19}$/;

export const NAME_PREFIX = 'paynet-reports';

/** The environment name of local runs: its buckets are `paynet-reports-local-raw` and `-curated`. */
export const LOCAL_ENVIRONMENT = 'local';

/** The CloudFormation stack of an environment (the CDK app names it; `reports status` reads it). */
export const stackName = (environment: string): string => `PaynetReports-${environment}`;

/** What a created secret holds until the user puts the credentials (`reports status` recognises it). */
export const PLACEHOLDER_SECRET = { login: 'REPLACE_ME', controlKey: 'REPLACE_ME' } as const;

export interface BucketNames {
  /** Raw reports as the gateway sent them: `raw/...` (versioned in AWS). */
  raw: string;
  /** Parquet tables, rejected rows and manifests: `tables/...`, `rejected/...`, `manifests/...`. */
  curated: string;
}

/**
 * `paynet-reports-<environment>-raw` and `-curated`. S3 bucket names are global across all accounts, so the
 * stack may pass a `qualifier` (for example `${Aws.ACCOUNT_ID}-${Aws.REGION}`): it is appended as is
 * (CDK tokens included) and not validated here. Locally no qualifier is needed.
 */
export function bucketNames(environment: string, qualifier?: string): BucketNames {
  if (!ENVIRONMENT.test(environment)) {
    throw new ConfigurationError(
      `environment "${environment}" must be 1-20 characters of lower-case letters, digits and hyphens, starting with a letter: it is part of bucket names.`,
    );
  }
  const suffix = qualifier ? `-${qualifier}` : '';
  return {
    raw: `${NAME_PREFIX}-${environment}-raw${suffix}`,
    curated: `${NAME_PREFIX}-${environment}-curated${suffix}`,
  };
}

import { ConfigurationError } from '../../functions/core/errors.js';

/**
 * The AWS region and credentials a command's clients will use, resolved before the first call: without them every
 * call fails, and each failure would read as a missing permission ("your credentials need …") when there is
 * nothing to permit. So they are said as what they are, once, before anything else.
 */

/** What every SDK v3 client's resolved config offers: the region and the credentials as providers. */
export interface AwsClientConfig {
  config: { region: () => Promise<string>; credentials: () => Promise<unknown> };
}

/** `regionFrom`: where this command takes a region from, e.g. `pass --region, or set "region" in config/environments/integration.json`. */
export async function requireAwsAccess(client: AwsClientConfig, regionFrom: string): Promise<{ region: string }> {
  let region: string;
  try {
    region = await client.config.region();
  } catch {
    throw new ConfigurationError(`No AWS region: ${regionFrom}, or set AWS_REGION (or a profile's region, with AWS_PROFILE). Nothing was called.`);
  }
  try {
    await client.config.credentials();
  } catch (e) {
    // The chain's own words when they say more than "none found" (an expired SSO session, a profile that is not there).
    const said = e instanceof Error && !/could not load credentials from any providers/i.test(e.message) ? ` (${e.message.split('\n')[0]})` : '';
    const profile = process.env.AWS_PROFILE ? ` for the profile "${process.env.AWS_PROFILE}" (AWS_PROFILE)` : '';
    throw new ConfigurationError(
      `No AWS credentials${profile}${said}: sign in first, e.g. aws sso login --profile NAME and AWS_PROFILE=NAME, or aws configure; ` +
        `the SDK reads the environment, ~/.aws/config and ~/.aws/credentials. Nothing was called (region ${region}).`,
    );
  }
  return { region };
}

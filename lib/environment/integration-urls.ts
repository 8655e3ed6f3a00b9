/**
 * The integration URLs of the paging services (PagerDuty, Opsgenie): each carries its service's key, which anyone
 * holding it can use to open incidents. What a URL must look like, what its key is, and how it is shown: never
 * whole, only the key's last four characters ("…cdef"), everywhere a command, a log or a synth warning writes it.
 */

export interface IntegrationRule {
  /** The service as people name it. */
  readonly label: string;
  /** The URL shape, key as <key>, for messages and docs. */
  readonly example: string;
  /** Where the service shows the URL: what to do when the one given is not it. */
  readonly where: string;
  readonly hosts: readonly string[];
  /** The key of a URL of this service, or undefined if the URL is not of its shape. */
  keyOf(url: URL): string | undefined;
  /** What is wrong with a URL of one of its hosts that is not of its shape (a known wrong endpoint), if anything known. */
  knownMistake(url: URL): string | undefined;
}

export const PAGERDUTY: IntegrationRule = {
  label: 'PagerDuty',
  example: 'https://events.pagerduty.com/integration/<key>/enqueue',
  where: 'add an "Amazon CloudWatch" integration to the PagerDuty service and copy its Integration URL',
  // The EU service region has its own events host.
  hosts: ['events.pagerduty.com', 'events.eu.pagerduty.com'],
  keyOf: (url) => /^\/integration\/([A-Za-z0-9]{20,64})\/enqueue\/?$/.exec(url.pathname)?.[1],
  knownMistake: (url) =>
    /^\/v2\/enqueue\/?$/.test(url.pathname)
      ? 'is the Events API v2 endpoint, which cannot read the messages SNS sends (it wants its own JSON with a routing key)'
      : undefined,
};

export const OPSGENIE: IntegrationRule = {
  label: 'Opsgenie',
  example: 'https://api.opsgenie.com/v1/json/cloudwatch?apiKey=<key> (EU accounts: api.eu.opsgenie.com)',
  where: 'add an "Amazon CloudWatch" integration to the Opsgenie team and copy the SNS subscription URL it shows',
  hosts: ['api.opsgenie.com', 'api.eu.opsgenie.com'],
  keyOf: (url) => {
    const key = url.searchParams.get('apiKey');
    return /^\/v1\/json\/cloudwatch\/?$/.test(url.pathname) && key && /^[A-Za-z0-9-]{16,64}$/.test(key) ? key : undefined;
  },
  knownMistake: (url) =>
    /^\/v2\/alerts/.test(url.pathname) ? "is Opsgenie's Alert API, which cannot read the messages SNS sends: use the CloudWatch integration's URL" : undefined,
};

export const INTEGRATION_RULES: readonly IntegrationRule[] = [PAGERDUTY, OPSGENIE];

/** "…cdef": enough of a key to tell two apart, never enough to use. */
export const maskedKey = (key: string): string => `…${key.slice(-4)}`;

/** How an integration is shown: "PagerDuty (integration …cdef)". */
export const shownIntegration = (rule: IntegrationRule, key: string): string => `${rule.label} (integration ${maskedKey(key)})`;

/**
 * What is wrong with `text` as a URL of `rule`'s service, in words that say what to do; undefined when it is right.
 * The message never holds the URL or its key.
 */
export function integrationUrlProblem(rule: IntegrationRule, text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `is not a URL: ${rule.where} (${rule.example})`;
  }
  if (url.protocol !== 'https:') return `must be https://: SNS would send the alarms, and the key in the URL, in clear (${rule.example})`;
  if (!rule.hosts.includes(url.hostname)) return `is not a URL of ${rule.label} (host ${url.hostname}): ${rule.where} (${rule.example})`;
  const mistake = rule.knownMistake(url);
  if (mistake) return `${mistake}: ${rule.where} (${rule.example})`;
  if (!rule.keyOf(url)) return `is not the shape of a ${rule.label} CloudWatch integration URL: ${rule.where} (${rule.example})`;
  return undefined;
}

/** The rule and key of an integration URL, or undefined when it is none of the services'. */
export function integrationOf(text: string | undefined): { rule: IntegrationRule; key: string } | undefined {
  let url: URL;
  try {
    url = new URL(text ?? '');
  } catch {
    return undefined;
  }
  for (const rule of INTEGRATION_RULES) {
    const key = rule.hosts.includes(url.hostname) ? rule.keyOf(url) : undefined;
    if (key) return { rule, key };
  }
  return undefined;
}

/**
 * `text` with every integration URL of the services shown as "PagerDuty (integration …cdef)": for any text that may
 * quote an endpoint (an AWS error message, a subscription listing). Other URLs keep only their scheme and host.
 */
export function withoutKeys(text: string): string {
  return text.replace(/https?:\/\/[^\s"'<>)]+/g, (found) => {
    const integration = integrationOf(found);
    if (integration) return shownIntegration(integration.rule, integration.key);
    try {
      const url = new URL(found);
      return url.pathname === '/' && !url.search ? found : `${url.protocol}//${url.host}/…`;
    } catch {
      return found;
    }
  });
}

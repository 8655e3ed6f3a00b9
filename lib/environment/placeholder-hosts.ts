/**
 * The hosts the shipped environment files (config/environments/) carry in place of a provider's: synthesis warns
 * while a connection still points at one. Only these: a user's own `*.example` host (a test environment, a demo)
 * is theirs, not "the shipped placeholder" (test/infra/connections.test.ts holds this list to the shipped files).
 */
export const SHIPPED_PLACEHOLDER_HOSTS: readonly string[] = ['gateway.example', 'integration.gateway.example'];

export const isShippedPlaceholder = (endpointUrl: string): boolean => SHIPPED_PLACEHOLDER_HOSTS.includes(new URL(endpointUrl).hostname);

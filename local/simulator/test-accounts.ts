import { generateKeyPair as generateKeyPairCb } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  SIGNATURE_METHODS,
  SIGNING,
  type GatewaySecret,
  type SecretOf,
  type SignatureMethod,
} from '../../functions/core/gateway/signature-methods.js';

/**
 * The simulator's test account of each signature method: throwaway credentials made for the simulator,
 * printed and written to files freely, never real ones. One entry per method of
 * functions/core/gateway/signature-methods.ts (the compiler asks for it); the simulator holds what the gateway keeps
 * for each (gatewayAccountOf, server.ts) and verifies with the method's own entry (auth.ts).
 */

const generateKeyPair = promisify(generateKeyPairCb);

/** The control key of the HMAC-SHA1 test account: fixed, so tests can look for it in logs. */
export const DEFAULT_HMAC_CONTROL_KEY = 'simulator-test-control-key-not-a-secret';

/** A new private key for the RSA test account (2048 bits: ~60-170 ms of CPU, on libuv's pool). */
export const makeRsaTestKey = async (): Promise<string> =>
  (await generateKeyPair('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } })).privateKey;

/** What the caller may fix of a test account (SimulatorOptions): its login and key material. */
type Given<M extends SignatureMethod> = Partial<Omit<SecretOf<M>, 'signatureMethod'>>;

interface TestAccount<M extends SignatureMethod> {
  /** Its short name: its key in Simulator.credentials and SimulatorOptions, and its file `<name>.json` (`reports simulator`). */
  readonly name: string;
  /** The login, unless the caller gives one. */
  readonly login: string;
  /** The merchant's secret of a new simulator, with what the caller gave in place of what would be made. */
  secret(login: string, given: Given<M>): Promise<SecretOf<M>>;
  /** How `reports simulator` shows the key: a shared one in full (it is a test value), a private one by name. */
  shown(secret: SecretOf<M>): string;
  /** What a merchant hands the provider, written beside the secret (its `key` in the standalone's files). */
  readonly handedOver?: { readonly key: string; readonly label: string; readonly file: string; content(secret: SecretOf<M>): string };
}

export const TEST_ACCOUNTS = {
  'HMAC-SHA1': {
    name: 'hmac',
    login: 'sim-merchant-hmac',
    // The default method: its secret leaves signatureMethod out, as the documented shape does.
    secret: async (login, given) => ({ login, controlKey: given.controlKey ?? DEFAULT_HMAC_CONTROL_KEY }),
    shown: (secret) => `control key "${secret.controlKey}"`,
  },
  'RSA-SHA256': {
    name: 'rsa',
    login: 'sim-merchant-rsa',
    // A new 2048-bit pair at every start unless one is given.
    secret: async (login, given) => ({ login, signatureMethod: 'RSA-SHA256', privateKeyPem: given.privateKeyPem ?? (await makeRsaTestKey()) }),
    shown: () => 'private key',
    handedOver: { key: 'rsaPublicKey', label: 'public key', file: 'rsa-public.pem', content: (secret) => SIGNING['RSA-SHA256'].gatewayRecord(secret).publicKeyPem },
  },
} as const satisfies { readonly [M in SignatureMethod]: TestAccount<M> };

type NameOf<M extends SignatureMethod> = (typeof TEST_ACCOUNTS)[M]['name'];
type HandedOverKeyOf<M extends SignatureMethod> = (typeof TEST_ACCOUNTS)[M] extends { handedOver: { key: infer K extends string } } ? K : never;

/** The test secrets by short name: `credentials.hmac`, `credentials.rsa`. */
export type TestCredentials = { [M in SignatureMethod as NameOf<M>]: SecretOf<M> };
/** What the caller fixes of each test account, by short name: `{ rsa: { privateKeyPem } }`. */
export type TestAccountOverrides = { [M in SignatureMethod as NameOf<M>]?: Given<M> };
/** The files `reports simulator` writes: each secret by short name, and what is handed over by its key. */
export type TestAccountFiles = { [M in SignatureMethod as NameOf<M>]: string } & { [M in SignatureMethod as HandedOverKeyOf<M>]: string };

/** The general entry, for code that goes over every method (each entry is only ever given its own method's secret). */
const accountOf = (method: SignatureMethod): TestAccount<SignatureMethod> => TEST_ACCOUNTS[method];

/**
 * The test login a simulator standing for one connection signs as: `sim-<connection>-hmac`, `sim-<connection>-rsa`
 * (the embedded simulators of `npm start` and `reports check`, and `npm run simulator`'s accounts per connection).
 */
export const connectionLogin = (connection: string, account: 'hmac' | 'rsa'): string => `sim-${connection}-${account}`;

/** The login of the default (HMAC-SHA1) test account, which generated rows are made for unless a request says otherwise. */
export const DEFAULT_HMAC_LOGIN = TEST_ACCOUNTS['HMAC-SHA1'].login;
export const DEFAULT_RSA_LOGIN = TEST_ACCOUNTS['RSA-SHA256'].login;

/** A new simulator's test secrets, one per method. */
export async function makeTestCredentials(overrides: TestAccountOverrides = {}): Promise<TestCredentials> {
  const secrets = await Promise.all(
    SIGNATURE_METHODS.map(async (method) => {
      const account = accountOf(method);
      const given: Given<SignatureMethod> = (overrides as Record<string, Given<SignatureMethod> | undefined>)[account.name] ?? {};
      return [account.name, await account.secret(given.login ?? account.login, given)] as const;
    }),
  );
  return Object.fromEntries(secrets) as TestCredentials;
}

/** The test secret of one method. */
export const testSecretOf = (credentials: TestCredentials, method: SignatureMethod): GatewaySecret =>
  (credentials as Record<string, GatewaySecret>)[accountOf(method).name]!;

/** One line per test account for `reports simulator`: the method, the login, the key, and where each file went. */
export function describeTestAccounts(credentials: TestCredentials, shownPath: (name: string) => string): string[] {
  return SIGNATURE_METHODS.map((method) => {
    const account = accountOf(method);
    const secret = testSecretOf(credentials, method);
    const handed = account.handedOver ? `, ${account.handedOver.label} -> ${shownPath(account.handedOver.key)}` : '';
    return `  ${`${method}:`.padEnd(13)}login "${secret.login}", ${account.shown(secret)} -> ${shownPath(account.name)}${handed}`;
  });
}

/** The names of the files `reports simulator` writes per test account: hmac.json, rsa.json, rsa-public.pem. */
export const TEST_ACCOUNT_FILE_NAMES: readonly string[] = SIGNATURE_METHODS.flatMap((method) => {
  const account = accountOf(method);
  return [`${account.name}.json`, ...(account.handedOver ? [account.handedOver.file] : [])];
});

export interface TestAccountFile {
  /** Its key in TestAccountFiles. */
  key: string;
  path: string;
  content: string;
  /** A secret (for --secret-file), or what a merchant hands the provider. */
  secret: boolean;
}

/** The files of the test accounts in `dir`: `<name>.json` per secret, and what is handed over, with their content. */
export function testAccountFiles(credentials: TestCredentials, dir: string): TestAccountFile[] {
  return SIGNATURE_METHODS.flatMap((method) => {
    const account = accountOf(method);
    const secret = testSecretOf(credentials, method);
    const files: TestAccountFile[] = [{ key: account.name, path: join(dir, `${account.name}.json`), content: `${JSON.stringify(secret, null, 2)}\n`, secret: true }];
    if (account.handedOver) files.push({ key: account.handedOver.key, path: join(dir, account.handedOver.file), content: account.handedOver.content(secret), secret: false });
    return files;
  });
}

import { readFileSync } from 'node:fs';

/**
 * Key pairs made once with openssl and committed under test/fixtures/keys/, so no test spends seconds generating
 * RSA keys (a 4096-bit one takes over a second, and Stryker re-runs each test file per mutant). Test keys only:
 * they sign nothing outside the tests. How each was made:
 *   rsa-2048 / rsa-4096   openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:N (PKCS#8), the same key as
 *                         PKCS#1 with `openssl rsa -traditional`, its public key with `openssl pkey -pubout` (SPKI)
 *   rsa-1024, rsa-8192    the same, one size below and above what the gateway accepts (PKCS#8 only)
 *   rsa-pss-2048          openssl genpkey -algorithm RSA-PSS -pkeyopt rsa_keygen_bits:2048
 *   dsa-2048              openssl genpkey -paramfile <(genparam DSA, dsa_paramgen_bits:2048, dsa_paramgen_q_bits:256)
 *   ec-p256, ed25519      openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256; -algorithm ed25519
 *   sm2                   openssl genpkey -algorithm SM2: a key type node:crypto reads but does not name
 */
export type TestKeyName =
  | 'rsa-2048.pkcs1' | 'rsa-2048.pkcs8' | 'rsa-2048.public'
  | 'rsa-4096.pkcs1' | 'rsa-4096.pkcs8' | 'rsa-4096.public'
  | 'rsa-1024' | 'rsa-8192' | 'rsa-pss-2048' | 'dsa-2048' | 'ec-p256' | 'ed25519' | 'sm2';

/** The PEM text of test/fixtures/keys/<name>.test-key.pem. */
export const testKey = (name: TestKeyName): string =>
  readFileSync(new URL(`../fixtures/keys/${name}.test-key.pem`, import.meta.url), 'utf8');

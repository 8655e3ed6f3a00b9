import { ArnFormat, Duration, RemovalPolicy, SecretValue, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { DEFAULT_CONNECTION } from '../../functions/core/connections/connection.js';

/** The secret of one connection, as its environment file gives it (lib/environment/environments.ts). */
export interface ConnectionSecretProps {
  /** The connection's name: a report names it, and the secret's description says it. */
  readonly connection: string;
  /** The secret's name; the fetch function finds it in CONNECTIONS. */
  readonly secretName: string;
  /** create: a new secret holding a placeholder; existing: look it up by name. */
  readonly mode: 'create' | 'existing';
  /** For an existing secret encrypted with a customer-managed key: that key, so the fetch role may decrypt. */
  readonly existingKeyArn?: string;
}

export interface CredentialsProps {
  readonly environment: string;
  /** One secret per connection, each created or referenced per its mode. */
  readonly connections: readonly ConnectionSecretProps[];
  readonly removalPolicy: RemovalPolicy;
}

/** One connection's secret in the stack. */
export interface ConnectionSecret {
  readonly connection: string;
  readonly secret: secretsmanager.ISecret;
  readonly secretName: string;
  /** The key that decrypts it, when the stack knows it: the credentials key, or an existing secret's kmsKeyArn. */
  readonly key?: kms.IKey;
  /** The key of an existing secret: not attached to the imported secret, so granted to the reader explicitly. */
  readonly importedKey?: kms.IKey;
}

/**
 * What the stack writes into a created secret. Not a credential: it has the documented shape so the
 * operator sees what to fill in, and the fetch run fails with "not authorised" for login REPLACE_ME
 * until they do. CloudFormation only writes it when the template value changes, so once the stack is
 * deployed never edit this text: an update would overwrite the real credentials.
 */
export { PLACEHOLDER_SECRET } from '../../functions/core/naming.js';
import { PLACEHOLDER_SECRET } from '../../functions/core/naming.js';
import { SECRET_SHAPES } from '../../functions/core/gateway/secret.js';

/** The shapes come from the signature methods' entries (functions/core/gateway/signature-methods.ts), so a new method is described too. */
const describeSecret = (environment: string, connection: string) =>
  `Gateway credentials of paynet-reports ${environment}, connection "${connection}". Replace the placeholder with one of: ${SECRET_SHAPES} ` +
  '(a PEM with its newlines as \\n). ' +
  'E.g. aws secretsmanager put-secret-value --secret-id <this name> --secret-string file://secret.json';

/**
 * Construct ids, which make the logical ids. The connection `default` keeps `Secret`, the id of the one secret
 * before connections existed: a new logical id would replace the named secret, and the replacement fails (the
 * name is taken) or, once the old one is gone, loses the credentials put into it. The others are named after
 * their connection (lower-case letters, digits and "-": valid in an id and stable while the name is).
 */
export const secretIdOf = (connection: string): string => (connection === DEFAULT_CONNECTION ? 'Secret' : `Secret-${connection}`);

/**
 * The gateway credentials: one Secrets Manager secret per connection. The created ones share one KMS key of
 * their own (`Key`, the id it always had; a key per connection would cost $1 a month each for no separation
 * the key policy does not already give), so that the only role able to decrypt them is the one they are
 * granted to (the fetch function). An existing secret keeps its own key.
 */
export class Credentials extends Construct {
  /** By connection name, in the order of the environment file. */
  readonly secrets: ReadonlyMap<string, ConnectionSecret>;
  /** The key of the created secrets; undefined when every secret is existing. */
  readonly key?: kms.Key;

  constructor(scope: Construct, id: string, props: CredentialsProps) {
    super(scope, id);
    if (!props.connections.length) throw new Error(`${this.node.path}: no connection: an environment defines at least one.`);
    if (props.connections.some((c) => c.mode === 'create')) {
      this.key = new kms.Key(this, 'Key', {
        description: `paynet-reports ${props.environment}: gateway credentials`,
        enableKeyRotation: true,
        removalPolicy: props.removalPolicy,
        pendingWindow: props.removalPolicy === RemovalPolicy.DESTROY ? Duration.days(7) : undefined,
      });
    }
    this.secrets = new Map(props.connections.map((c) => [c.connection, c.mode === 'existing' ? this.existing(c) : this.created(c, props)]));
  }

  /** The secret of one connection; the error names the connections there are. */
  secretOf(connection: string): ConnectionSecret {
    const found = this.secrets.get(connection);
    if (!found) throw new Error(`${this.node.path}: no connection "${connection}" (there are ${[...this.secrets.keys()].join(', ')}).`);
    return found;
  }

  private existing(c: ConnectionSecretProps): ConnectionSecret {
    // Only an import, no resource: its id is free to differ from the created key's.
    const importedKey = c.existingKeyArn ? kms.Key.fromKeyArn(this, `ExistingKey-${c.connection}`, c.existingKeyArn) : undefined;
    // A partial ARN (no random suffix): grants then cover "<name>-??????", the secret whatever its suffix.
    const secretPartialArn = Stack.of(this).formatArn({
      service: 'secretsmanager',
      resource: 'secret',
      resourceName: c.secretName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    // The key is not attached to the imported secret: its grantRead would drop the decrypt grant silently
    // (an imported key's policy cannot be edited). grantRead below adds it to the grantee's policy instead.
    const secret = secretsmanager.Secret.fromSecretAttributes(this, secretIdOf(c.connection), { secretPartialArn });
    return { connection: c.connection, secret, secretName: c.secretName, key: importedKey, importedKey };
  }

  private created(c: ConnectionSecretProps, props: CredentialsProps): ConnectionSecret {
    const secret = new secretsmanager.Secret(this, secretIdOf(c.connection), {
      secretName: c.secretName,
      description: describeSecret(props.environment, c.connection),
      encryptionKey: this.key,
      secretStringValue: SecretValue.unsafePlainText(JSON.stringify(PLACEHOLDER_SECRET)),
      removalPolicy: props.removalPolicy,
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The login and control key (or the RSA key pair) are issued together with the payment provider: a rotation ' +
        "Lambda cannot change them on the provider's side. Rotate by agreeing new credentials with the provider and " +
        'putting the new value (see the secret description).',
    });
    return { connection: c.connection, secret, secretName: c.secretName, key: this.key };
  }

  /**
   * Read access to every connection's secret and nothing else: GetSecretValue on each secret, kms:Decrypt through
   * Secrets Manager on its key. Grant it to the fetch function alone. Not CDK's Secret.grantRead: it adds
   * secretsmanager:DescribeSecret, which the function never calls (test/iam proves what it does call).
   */
  grantRead(grantee: iam.IGrantable): void {
    const viaSecretsManager = `secretsmanager.${Stack.of(this).region}.amazonaws.com`;
    for (const s of this.secrets.values()) {
      // A secret known by its partial ARN is matched with the six characters Secrets Manager appends, as CDK does.
      iam.Grant.addToPrincipal({ grantee, actions: ['secretsmanager:GetSecretValue'], resourceArns: [s.secret.secretFullArn ?? `${s.secret.secretArn}-??????`] });
      if (!s.importedKey) {
        s.key?.grantDecrypt(new kms.ViaServicePrincipal(viaSecretsManager, grantee.grantPrincipal));
        continue;
      }
      // Only through Secrets Manager: the grantee cannot use the key for anything else.
      iam.Grant.addToPrincipal({
        grantee,
        actions: ['kms:Decrypt'],
        resourceArns: [s.importedKey.keyArn],
        conditions: { StringEquals: { 'kms:ViaService': viaSecretsManager } },
      });
    }
  }
}

import { ArnFormat, Duration, RemovalPolicy, SecretValue, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

export interface CredentialsProps {
  readonly environment: string;
  /** The secret's name; the fetch function gets it as SECRET_NAME. */
  readonly secretName: string;
  /** create: a new secret holding a placeholder; existing: look it up by name. */
  readonly mode: 'create' | 'existing';
  /** For an existing secret encrypted with a customer-managed key: that key, so the fetch role may decrypt. */
  readonly existingKeyArn?: string;
  readonly removalPolicy: RemovalPolicy;
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
const describeSecret = (environment: string) =>
  `Gateway credentials of paynet-reports ${environment}. Replace the placeholder with one of: ${SECRET_SHAPES} ` +
  '(a PEM with its newlines as \\n). ' +
  'E.g. aws secretsmanager put-secret-value --secret-id <this name> --secret-string file://secret.json';

/**
 * The gateway credentials: one Secrets Manager secret per environment, encrypted with its own KMS key
 * so that the only role able to decrypt it is the one it is granted to (the fetch function).
 */
export class Credentials extends Construct {
  readonly secret: secretsmanager.ISecret;
  /** The key of a created secret, or of an existing one when its ARN was configured. */
  readonly key?: kms.IKey;
  readonly secretName: string;
  private importedKey?: kms.IKey;

  constructor(scope: Construct, id: string, props: CredentialsProps) {
    super(scope, id);
    this.secretName = props.secretName;

    if (props.mode === 'existing') {
      this.key = props.existingKeyArn ? kms.Key.fromKeyArn(this, 'Key', props.existingKeyArn) : undefined;
      // A partial ARN (no random suffix): grants then cover "<name>-??????", the secret whatever its suffix.
      const secretPartialArn = Stack.of(this).formatArn({
        service: 'secretsmanager',
        resource: 'secret',
        resourceName: props.secretName,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      });
      // The key is not attached to the imported secret: its grantRead would drop the decrypt grant silently
      // (an imported key's policy cannot be edited). grantRead below adds it to the grantee's policy instead.
      this.secret = secretsmanager.Secret.fromSecretAttributes(this, 'Secret', { secretPartialArn });
      this.importedKey = this.key;
      return;
    }

    const key = new kms.Key(this, 'Key', {
      description: `paynet-reports ${props.environment}: gateway credentials`,
      enableKeyRotation: true,
      removalPolicy: props.removalPolicy,
      pendingWindow: props.removalPolicy === RemovalPolicy.DESTROY ? Duration.days(7) : undefined,
    });
    const secret = new secretsmanager.Secret(this, 'Secret', {
      secretName: props.secretName,
      description: describeSecret(props.environment),
      encryptionKey: key,
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
    this.key = key;
    this.secret = secret;
  }

  /** Read access (GetSecretValue, DescribeSecret and kms:Decrypt via Secrets Manager). Grant it to the fetch function alone. */
  grantRead(grantee: iam.IGrantable): iam.Grant {
    const grant = this.secret.grantRead(grantee);
    if (this.importedKey) {
      // Only through Secrets Manager: the grantee cannot use the key for anything else.
      iam.Grant.addToPrincipal({
        grantee,
        actions: ['kms:Decrypt'],
        resourceArns: [this.importedKey.keyArn],
        conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${Stack.of(this).region}.amazonaws.com` } },
      });
    }
    return grant;
  }
}

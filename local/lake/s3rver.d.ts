/**
 * The part of s3rver 3.x (no published types) that the local lake uses. s3rver is a Koa application:
 * `middleware` is Koa's middleware list, and `store` its file-system store.
 */
declare module 's3rver' {
  import type { EventEmitter } from 'node:events';
  import type { AddressInfo } from 'node:net';

  export interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    directory?: string;
    resetOnClose?: boolean;
    allowMismatchedSignatures?: boolean;
    vhostBuckets?: boolean;
    serviceEndpoint?: string;
    configureBuckets?: Array<{ name: string; configs?: Array<string | Buffer> }>;
  }

  /** One record of the S3-shaped event s3rver emits in-process (its models/event.js). */
  export interface S3rverEventRecord {
    eventVersion: string;
    eventSource: string;
    awsRegion: string;
    eventTime: string;
    eventName: string;
    userIdentity: { principalId: string };
    requestParameters: { sourceIPAddress: string };
    responseElements: { 'x-amz-request-id': string; 'x-amz-id-2': string };
    s3: {
      s3SchemaVersion: string;
      configurationId: string;
      bucket: { name: string; ownerIdentity: { principalId: string }; arn: string };
      /** key is NOT URL-encoded here, unlike AWS; size and eTag are absent on delete events. */
      object: { key: string; sequencer: string; size?: number; eTag?: string };
    };
  }

  export interface KoaContext {
    method: string;
    path: string;
    query: Record<string, string | string[] | undefined>;
    status: number;
    body: unknown;
    type: string;
  }
  export type KoaMiddleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void> | void;

  export default class S3rver extends EventEmitter {
    constructor(options?: S3rverOptions);
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
    middleware: KoaMiddleware[];
    store: {
      rootDirectory: string;
      getResourcePath(bucket: string, key: string | undefined, resource: string): string;
      putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5?: string): Promise<void>;
      putObject(object: { bucket: string; key: string; content: Buffer | import('node:stream').Readable; metadata: Record<string, string> }): Promise<{ size: number; md5: string }>;
      putPart(bucket: string, uploadId: string, partNumber: number, content: import('node:stream').Readable): Promise<{ size: number; md5: string }>;
      putObjectMultipart(bucket: string, uploadId: string, parts: Array<{ number: number; etag: string }>): Promise<{ size: number; md5: string }>;
    };
    on(event: 'event', listener: (event: { Records: S3rverEventRecord[] }) => void): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }
}

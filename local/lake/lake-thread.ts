import { constants } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import type { BucketNames } from '../../functions/core/naming.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { scriptBeside, startWorkerScript } from '../../functions/runtime/worker-script.js';
import type { FromLakeWorker, LakeWorkerData } from './lake-worker.js';

/**
 * The local lake's server thread (lake-worker.ts), started on its own: this module loads no AWS SDK, so a
 * command can start the thread first and load the SDK and the handlers while s3rver boots on the other core
 * (each takes ~0.2 s). local-lake.ts adopts the thread and puts the S3 client in front of it.
 */

export interface LakeThreadOptions {
  /** Where objects live on disk (kept across runs; s3rver stores each object as files under <dir>/<bucket>/). */
  dir: string;
  buckets: BucketNames;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** A loopback address: 127.0.0.1 (default), ::1 or localhost. */
  host?: string;
  /** Test seam: the server thread holds each event message back this long (see lake-worker.ts). */
  delayEventsMs?: number;
}

export type LakeReady = Extract<FromLakeWorker, { t: 'ready' }>;

export interface LakeThread {
  readonly options: LakeThreadOptions;
  readonly worker: Worker;
  /** Resolves when the server listens; rejects with the thread's own failure (EACCES, EADDRINUSE, ...). */
  readonly ready: Promise<LakeReady>;
  /**
   * Hands the thread's other messages (events, closed) to `listener`, those that came before included.
   * Once only: the thread then belongs to one lake.
   */
  adopt(listener: (m: FromLakeWorker) => void): void;
  /** Stops a thread no lake adopted (a command that failed before it needed the lake). Idempotent. */
  discard(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export function startLakeThread(options: LakeThreadOptions): LakeThread {
  const host = options.host ?? '127.0.0.1';
  if (!LOOPBACK.has(host)) {
    throw new ConfigurationError(`The local lake listens on loopback only (127.0.0.1, ::1, localhost), not "${host}".`);
  }
  const workerData: LakeWorkerData = {
    dir: options.dir,
    host,
    port: options.port ?? 0,
    buckets: [options.buckets.raw, options.buckets.curated],
    ...(options.delayEventsMs ? { delayEventsMs: options.delayEventsMs } : {}),
  };
  // The server's garbage is short-lived (request chunks on their way to disk): a small young generation is
  // collected more often at no measurable CPU cost, and keeps ~40 MB less resident during a 130 MiB upload.
  const worker = startWorkerScript(lakeWorkerUrl(), { workerData, resourceLimits: { maxYoungGenerationSizeMb: 2 } });

  // A Worker drops messages nobody listens to: until a lake adopts the thread, they wait here.
  let held: FromLakeWorker[] = [];
  let adopted: ((m: FromLakeWorker) => void) | undefined;
  const ready = new Promise<LakeReady>((resolve, reject) => {
    worker.on('message', (m: FromLakeWorker) => {
      if (m.t === 'ready') resolve(m);
      else if (m.t === 'failed') {
        const { t: _, message, ...fields } = m;
        reject(Object.assign(new Error(message), fields));
      } else if (adopted) adopted(m);
      else held.push(m);
    });
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(`The local lake's S3 server stopped (thread exit code ${code}).`)));
  });
  // Nobody may be waiting yet: a failure is reported by whoever awaits `ready`, not as an unhandled rejection.
  ready.catch(() => undefined);

  let discarded: Promise<void> | undefined;
  return {
    options,
    worker,
    ready,
    adopt(listener) {
      if (adopted) throw new Error('the lake thread is already adopted');
      adopted = listener;
      const earlier = held;
      held = [];
      for (const m of earlier) listener(m);
    },
    discard() {
      if (adopted) return Promise.resolve();
      discarded ??= worker.terminate().then(() => undefined);
      return discarded;
    },
  };
}

/**
 * Checks, before anything starts, that `dir` is a directory this process can write, or can be created:
 * s3rver would otherwise fail on the first object with a raw EACCES/ENOTDIR, or answer "We encountered
 * an internal error". Creates it when missing. `flag` names the option in the message.
 */
export async function ensureWritableDir(dir: string, flag = '--lake'): Promise<void> {
  const path = resolve(dir);
  const fail = (why: string): never => {
    throw new ConfigurationError(`${flag} ${dir}: ${why}. Pass ${flag} a directory you can write to (it is created if missing).`);
  };
  // The nearest part of the path that exists decides: a file there, or no write permission, fails.
  const kindOf = (p: string) => stat(p).then((s) => (s.isDirectory() ? 'dir' : 'file'), () => undefined);
  let existing = path;
  let kind = await kindOf(existing);
  while (kind === undefined && dirname(existing) !== existing) {
    existing = dirname(existing);
    kind = await kindOf(existing);
  }
  if (kind === 'file') fail(existing === path ? 'is a file, not a directory' : `${existing} is a file, not a directory`);
  try {
    await access(existing, constants.W_OK | constants.X_OK);
  } catch {
    fail(existing === path ? 'is not writable' : `cannot be created: ${existing} is not writable`);
  }
  try {
    await mkdir(path, { recursive: true });
  } catch (e) {
    fail(`cannot be created (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
}

/** lake-worker.{js,mjs,ts} beside this module: .ts when run from source (tsx), .js/.mjs when built. */
function lakeWorkerUrl(): URL {
  const url = scriptBeside('lake-worker', import.meta.url);
  if (!url) throw new Error(`lake-worker is missing beside ${fileURLToPath(import.meta.url)}`);
  return url;
}

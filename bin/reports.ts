#!/usr/bin/env -S npx tsx
/**
 * `reports`: the command line of the pipeline. `npm start` is `reports run`; `npm run simulator` is
 * `reports simulator`. This file only runs the program: its commands and flags are in bin/program.ts, what each does in
 * local/cli/<command>.ts, loaded lazily so each starts fast.
 */
import { isPipelineError } from '../functions/core/errors.js';
import { buildProgram } from './program.js';

// The AWS SDK warns on every command under Node < 22 that its releases after January 2027 will need 22. The README
// supports Node 20.19 and package.json pins the SDK, so the warning names nothing the user can act on (the Lambda
// functions run Node 24). AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED is the SDK's own switch; set, it wins.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

buildProgram()
  .parseAsync(process.argv)
  .catch((e: unknown) => {
    // Typed errors already say what to do; anything else is a bug worth its stack.
    if (isPipelineError(e)) console.error(`${e.code}: ${e.message}`);
    else console.error(e);
    process.exitCode = 1;
  });

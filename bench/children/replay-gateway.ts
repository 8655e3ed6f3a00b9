import { startReplayGateway } from '../chain-gateway.js';

/**
 * The chain's gateway in a process of its own (forked by chain.bench.ts), so the command measured shares its
 * machine with a gateway as it would with a real one, not its parent's event loop with the bench's sampling.
 * Says its URL once listening; answers 'requests' with the requests so far; exits on 'close'.
 */
const gateway = await startReplayGateway(process.argv[2]!);
process.send!({ url: gateway.url });
process.on('message', (message: string) => {
  if (message === 'requests') process.send!({ requests: gateway.requests });
  if (message === 'close') void gateway.close().then(() => process.exit(0));
});

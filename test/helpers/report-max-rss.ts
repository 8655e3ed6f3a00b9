/**
 * Preloaded into a child process (`node --import ./test/helpers/report-max-rss.ts …`): prints the
 * process's peak resident memory on stderr as it exits, for memory-ceiling tests.
 */
process.on('exit', () => {
  process.stderr.write(`\nmax-rss-kib=${process.resourceUsage().maxRSS}\n`);
});

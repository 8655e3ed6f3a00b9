/**
 * The command line's commands and flags, and nothing else: bin/reports.ts runs it, and the docs test
 * (test/unit/docs-commands.test.ts) reads every documented command line through it. What each command does is in
 * local/cli/<command>.ts, loaded lazily so each starts fast.
 */
import { Command, Option } from 'commander';
import { DECODABLE_CODINGS } from '../functions/core/gateway/content-coding.js';
import { BODY_SIGNING, BODY_SIGNING_RULES, DEFAULT_BODY_SIGNING } from '../functions/core/gateway/oauth.js';
import { SECRET_SHAPES } from '../functions/core/gateway/secret.js';
import { wholeNumber } from '../local/args/option-values.js';
import { collect } from '../local/args/report-selection.js';
import { ConfigurationError } from '../functions/core/errors.js';
import { FAULTS, FAULT_MODES } from '../local/simulator/faults.js';
import { PERIOD_TO_READINGS } from '../local/simulator/report-request.js';
import { TEST_ACCOUNT_FILE_NAMES } from '../local/simulator/test-accounts.js';

/** `sign` and `check` sign alike: the body-signing rule is one option, its choices and their meaning from functions/core/gateway/oauth.ts. */
const bodySigningOption = () =>
  new Option('--body-signing <rule>', `how the JSON body enters the base string: ${BODY_SIGNING_RULES.map((r) => `${r}: ${BODY_SIGNING[r].meaning}`).join('; ')}`)
    .choices(BODY_SIGNING_RULES)
    .default(DEFAULT_BODY_SIGNING);

/** The secret file's help, from the signature methods' entries (functions/core/gateway/signature-methods.ts). */
const SECRET_FILE_HELP = `the gateway secret JSON: ${SECRET_SHAPES}`;

/** The embedded simulator's volume shape, alike on `simulator`, `run` and `backfill` (local/simulator/volume.ts). */
const weekdayVolumeOption = () =>
  new Option('--weekday-volume <factors>', 'simulator: rows per weekday as seven factors, Monday to Sunday (e.g. 1,1,1,1,1.2,0.6,0.4)');
const periodToOption = () =>
  new Option('--period-to <reading>', `simulator: how the gateway reads a period's "to", for every report (default: each definition's "periodTo"): ${Object.entries(PERIOD_TO_READINGS).map(([r, m]) => `${r}: ${m}`).join('; ')}`)
    .choices(Object.keys(PERIOD_TO_READINGS));
const dropDateOption = () =>
  new Option('--drop-date <date...>', 'simulator: the window starting on this date (YYYY-MM-DD[=SHARE]) gets SHARE of its usual rows (default 0.1; 0: header only)');

function addRun(program: Command): void {
  program
    .command('run', { isDefault: true })
    .description('run the whole pipeline for some windows of every report: each connection on an embedded simulator of its own unless --gateway-url points it at a gateway')
    .option('--report <id>', 'report definition id (config/reports/); repeat for several; default: every report', collect)
    .option('--connection <name>', "run the reports over this connection only; repeat for several; default: every connection of each report (each a feed)", collect)
    .option('--from <date>', 'first window start, inclusive (YYYY-MM-DD or YYYY-MM-DDTHH:mm in the report time zone); default: each report\'s latest complete window')
    .option('--to <date>', 'end, exclusive (YYYY-MM-DD or YYYY-MM-DDTHH:mm); default: the start of the current window')
    .option('--gateway-url <[connection=]url>', 'full endpoint URL of a gateway (…/services/v2/rpt-engine) for a connection (plain: "default") instead of its simulator; repeat per connection', collect)
    .option('--secret-file <[connection=]file>', `the secret of that connection's gateway, ${SECRET_FILE_HELP}; repeat per connection`, collect)
    .option('--concurrency <n>', 'windows in flight at once over every connection; each connection also keeps to its maxConcurrentRequests', wholeNumber, 2)
    .option('--lake <dir>', 'where the embedded S3 (s3rver) keeps the raw and curated buckets', './.lake')
    .option('--s3-endpoint <url>', 'an S3-compatible store (MinIO, LocalStack, …) instead of the embedded one; AWS credentials from the environment')
    .option('--allow-incomplete', 'also load windows that have not ended yet in the report time zone (today): the gateway sends only part of them')
    .option('--sample <ID=FILE...>', "the simulator of report ID's connection answers it with this file (say the sample the provider's support sent)")
    .option('--query-rows <n>', "rows of each saved query shown (default 20; when several reports' queries run, a line per query unless this is given)", wholeNumber)
    .addOption(weekdayVolumeOption())
    .addOption(dropDateOption())
    .addOption(periodToOption())
    .action(async (opts) => {
      const { runLocal } = await import('../local/cli/run.js');
      await runLocal(opts);
    });
}

function addSimulator(program: Command): void {
  program
    .command('simulator')
    .description('run the gateway simulator on 127.0.0.1 until Ctrl-C; prints its URL and test credentials')
    .option('--port <n>', 'port (0: any free port)', wholeNumber, 0)
    .option('--path-prefix <prefix>', 'path prefix before /services/v2/rpt-engine', 'paynet-ui')
    .option('--secrets-dir <dir>', `where the test accounts' <port>/${TEST_ACCOUNT_FILE_NAMES.join(', ')} are written (removed at stop)`, '.simulator')
    .option('--rows-per-day <n>', 'rows in a one-day report', wholeNumber)
    .addOption(weekdayVolumeOption())
    .addOption(dropDateOption())
    .addOption(
      new Option('--fault <mode>', `answer every request with a fault: ${FAULT_MODES.map((m) => `${m}: ${FAULTS[m].does}`).join('; ')}`).choices(FAULT_MODES),
    )
    .option('--times <n>', 'apply the fault to the first n requests only', wholeNumber)
    .option('--delay-ms <n>', 'delay of the slow fault', wholeNumber)
    .option('--retry-after <s>', 'Retry-After seconds of the rateLimited fault', wholeNumber)
    .option('--content-type <type>', 'Content-Type of successful reports ("none": no header), e.g. text/plain, application/octet-stream')
    .addOption(new Option('--compress <coding>', 'compress every report, asked or not').choices(DECODABLE_CODINGS))
    .option('--chunked', 'no Content-Length: the report trickles out in small chunks')
    .option('--sample <ID=FILE...>', 'answer report ID with this file instead of generated rows')
    .addOption(periodToOption())
    .option('--refuse <connection>', "answer this connection's login with the provider's authentication refusal (the refusal drill); repeat for several", collect)
    .action(async (opts) => {
      const { runSimulatorCommand } = await import('../local/cli/simulator.js');
      await runSimulatorCommand(opts);
    });
}

function addSign(program: Command): void {
  program
    .command('sign')
    .description('print the Authorization header and a ready curl command for one report request (to reproduce a call with support)')
    .requiredOption('--gateway-url <url>', 'full endpoint URL (…/services/v2/rpt-engine)')
    .requiredOption('--secret-file <file>', SECRET_FILE_HELP)
    .option('--report <id>', 'report definition id (config/reports/); default: the only one')
    .option('--from <date>', 'window start (YYYY-MM-DD); default: the last complete window')
    .addOption(bodySigningOption())
    .action(async (opts) => {
      const { runSignCommand } = await import('../local/cli/sign.js');
      await runSignCommand(opts);
    });
}

function addCheck(program: Command): void {
  program
    .command('check')
    .description('one signed request per connection (or per report), nothing stored: prints what each gateway answered, whether a run would load it, and a verdict line per connection')
    .option('--report <id>', 'check this report only (over its connection); default: one report of each connection')
    .option('--all', 'check every report of each connection')
    .option('--connection <name>', 'check this connection only (of the environment, or of the catalog)')
    .option('--from <date>', 'window start (YYYY-MM-DD); default: the last complete window')
    .option('--gateway-url <url>', 'full endpoint URL (…/services/v2/rpt-engine), with --secret-file; default: the embedded simulator, one per connection')
    .option('--secret-file <file>', SECRET_FILE_HELP)
    .option('--environment <name>', 'every connection of config/environments/<name>.json: its endpoint, and the credentials from its Secrets Manager secret (your AWS credentials)')
    .option('--json', 'print the results as JSON')
    .addOption(bodySigningOption())
    .action(async (opts) => {
      const { runCheckCommand } = await import('../local/cli/check.js');
      process.exitCode = await runCheckCommand(opts);
    });
}

function addInferSchema(program: Command): void {
  program
    .command('infer-schema <file>')
    .description("propose a report definition from a sample CSV (such as one the provider's support sends)")
    .option('--encoding <name>', 'the file encoding (UTF-8, windows-1251, …)')
    .option('--delimiter <char>', 'the field delimiter; default: detected from the header line')
    .option('--id <id>', 'the report id (lower snake_case); default: from the file name')
    .option('--out <file>', 'write the definition to this file (e.g. config/reports/<id>.json) instead of stdout; nothing is written if it fails')
    .option('--force', 'with --out: replace the file if it exists')
    .action(async (file: string, opts) => {
      const { runInferSchemaCommand } = await import('../local/cli/infer-schema.js');
      await runInferSchemaCommand(file, opts);
    });
}

function addJsonSchema(program: Command): void {
  program
    .command('json-schema')
    .description('regenerate config/report-definition.schema.json and config/environment.schema.json from the validators (editors complete report and environment files with them)')
    .action(async () => {
      const { runJsonSchemaCommand } = await import('../local/cli/json-schema.js');
      await runJsonSchemaCommand();
    });
}

function addQuery(program: Command): void {
  program
    .command('query [sql]')
    .description('run SQL on DuckDB over the local lake: one view per report (the Athena tables), e.g. "SELECT * FROM transactions LIMIT 5"')
    .option('--lake <dir>', 'the local lake directory (as given to `reports run`)', './.lake')
    .option('-f, --file <file>', 'read the SQL from a file, e.g. queries/transactions/daily_totals.sql')
    .option('--json', 'print JSON lines (bigint and decimal values as strings) instead of a table')
    .option('--list', 'list the views, their columns and how many Parquet files each covers')
    .option('--report <id>', 'make the view of this report only; repeat for several; default: every report', collect)
    .action(async (sql: string | undefined, opts) => {
      const { runQueryCommand } = await import('../local/cli/query.js');
      process.exitCode = await runQueryCommand(sql, opts);
    });
}

function addBackfill(program: Command): void {
  program
    .command('backfill')
    .description('load every window of a date range, locally (the embedded pipeline) or by invoking the deployed fetch function; safe to re-run')
    .option('--report <id>', 'report definition id (config/reports/); repeat for several; default: every report', collect)
    .option('--connection <name>', 'backfill the reports over this connection only; repeat for several; default: every connection of each report', collect)
    .requiredOption('--from <date>', 'first window start, inclusive (YYYY-MM-DD or YYYY-MM-DDTHH:mm in the report time zone)')
    .requiredOption('--to <date>', 'end, exclusive (YYYY-MM-DD or YYYY-MM-DDTHH:mm)')
    .option('--concurrency <n>', "windows of a report in flight at once; never more than its connection's maxConcurrentRequests requests", wholeNumber, 2)
    .option('--force', 'local: also re-run windows whose manifest says they loaded (to pick up later status changes)')
    .option('--gateway-url <[connection=]url>', 'local: full endpoint URL of a gateway for a connection (plain: "default") instead of its simulator; repeat per connection', collect)
    .option('--secret-file <[connection=]file>', `local, with that connection's --gateway-url: ${SECRET_FILE_HELP}`, collect)
    .option('--lake <dir>', 'local: where the embedded S3 keeps its buckets', './.lake')
    .option('--s3-endpoint <url>', 'local: an S3-compatible store instead of the embedded one; AWS credentials from the environment')
    .option('--allow-incomplete', 'also load windows that have not ended yet in the report time zone (today): the gateway sends only part of them')
    .addOption(weekdayVolumeOption())
    .addOption(dropDateOption())
    .option('--deployed', 'invoke the deployed fetch function (Lambda Invoke, one window per call) instead of running locally')
    .option('--function-name <name>', 'deployed: the fetch function\'s name or ARN')
    .option('--region <region>', 'deployed: the AWS region (default: from the environment or profile)')
    .option('--environment <name>', "deployed: the environment (config/environments/<name>.json) whose maxConcurrentRequests cap each connection's windows in flight; default: the smallest of every environment file")
    .action(async (opts) => {
      const { backfillCommand } = await import('../local/cli/backfill.js');
      process.exitCode = await backfillCommand(opts);
    });
}

function addReparse(program: Command): void {
  program
    .command('reparse')
    .description('rebuild windows\' Parquet, rejects and manifests from the raw files already stored, with the current definition; never calls the gateway')
    .option('--report <id>', 'report definition id (config/reports/); repeat for several; default: every report', collect)
    .requiredOption('--from <date>', 'first window start, inclusive (YYYY-MM-DD or YYYY-MM-DDTHH:mm in the report time zone)')
    .requiredOption('--to <date>', 'end, exclusive (YYYY-MM-DD or YYYY-MM-DDTHH:mm)')
    .option('--lake <dir>', 'local: the lake directory (default ./.lake)')
    .option('--environment <name>', 'rebuild in that deployment (config/environments/<name>.json) by invoking its parse function (your AWS credentials)')
    .option('--region <region>', 'with --environment: the AWS region (default: the environment\'s)')
    .option('--concurrency <n>', 'windows in flight at once', wholeNumber, 2)
    .action(async (opts) => {
      const { reparseCommand } = await import('../local/cli/reparse.js');
      process.exitCode = await reparseCommand(opts);
    });
}

function addStatus(program: Command): void {
  program
    .command('status')
    .description('after a deploy: what is in place and what is left to do (secret, alarm channels, schedules, newest loads, dead letters, row counts); with --lake, what the local lake holds')
    .option('--environment <name>', 'the environment (config/environments/<name>.json), e.g. integration')
    .option('--region <region>', 'the AWS region (default: the environment\'s, or from the environment or profile)')
    .option('--lake [dir]', 'the local lake instead (default ./.lake): per report the newest windows loaded, findings of the last 7 days, stale partitions, rejects')
    .action(async (opts: { environment?: string; region?: string; lake?: string | true }) => {
      if (opts.lake !== undefined) {
        if (opts.environment) throw new ConfigurationError('Give --environment NAME (a deployment) or --lake [DIR] (the local lake), not both.');
        const { runLakeStatusCommand } = await import('../local/lake/lake-status.js');
        process.exitCode = await runLakeStatusCommand({ lake: opts.lake });
        return;
      }
      if (!opts.environment) throw new ConfigurationError('Which status? --environment NAME for a deployment (config/environments/<name>.json), or --lake [DIR] for the local lake (default ./.lake).');
      const { runStatusCommand } = await import('../local/cli/status.js');
      process.exitCode = await runStatusCommand({ ...opts, environment: opts.environment });
    });
}

function addAlarms(program: Command): void {
  const alarms = program.command('alarms').description('the alarms of a deployed environment and who hears them (its alarmChannels)');
  alarms
    .command('test')
    .description(
      'a test page: sets one alarm of the environment to ALARM for a moment (CloudWatch SetAlarmState), says which channels should receive it, and sets it back (your AWS credentials)',
    )
    .requiredOption('--environment <name>', 'the environment (config/environments/<name>.json), deployed')
    .option('--region <region>', "the AWS region (default: the environment's, or from the environment or profile)")
    .option('--dry-run', 'say which alarm and which channels, and set nothing')
    .action(async (opts: { environment: string; region?: string; dryRun?: boolean }) => {
      const { runAlarmsTestCommand } = await import('../local/alarms/alarms-test.js');
      process.exitCode = await runAlarmsTestCommand(opts);
    });
}

/** A new program each call: a test may replace every action and parse many command lines. */
export function buildProgram(): Command {
  const program = new Command('reports')
    .description('Pull transaction reports from a PaynetEasy-style gateway into Parquet, locally or on AWS.')
    .showHelpAfterError();
  addRun(program);
  addSimulator(program);
  addSign(program);
  addCheck(program);
  addInferSchema(program);
  addJsonSchema(program);
  addQuery(program);
  addBackfill(program);
  addReparse(program);
  addStatus(program);
  addAlarms(program);
  return program;
}

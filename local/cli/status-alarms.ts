import { DescribeAlarmContributorsCommand, DescribeAlarmsCommand, type CloudWatchClient, type MetricAlarm } from '@aws-sdk/client-cloudwatch';
import { NAME_PREFIX } from '../../functions/core/naming.js';
import { Dimension } from '../../functions/aws/metrics.js';
import { formatAge, OPERATIONS, unknown, type StatusItem } from './status-items.js';

/**
 * The environment's alarms in ALARM, each on its own line; for a multi-report alarm (one per connection and kind,
 * lib/constructs/alarms.ts) the reports in breach, its contributors, by name. The notification names them too, but
 * only as a count past a few; CloudWatch holds at most 100 contributors in ALARM per alarm, and this says so.
 */
export async function checkAlarms(cloudWatch: CloudWatchClient, environment: string, now: Date): Promise<StatusItem[]> {
  const prefix = `${NAME_PREFIX}-${environment}-`;
  let firing: MetricAlarm[];
  try {
    firing = await alarmsInAlarm(cloudWatch, prefix);
  } catch (e) {
    return [unknown('alarms', e, 'cloudwatch:DescribeAlarms')];
  }
  if (!firing.length) return [{ item: 'alarms', verdict: 'OK', detail: `none of ${prefix}* in ALARM` }];
  return Promise.all(firing.map((alarm) => alarmItem(cloudWatch, alarm, prefix, now)));
}

async function alarmsInAlarm(cloudWatch: CloudWatchClient, prefix: string): Promise<MetricAlarm[]> {
  const alarms: MetricAlarm[] = [];
  let token: string | undefined;
  do {
    const page = await cloudWatch.send(new DescribeAlarmsCommand({ AlarmNamePrefix: prefix, StateValue: 'ALARM', AlarmTypes: ['MetricAlarm'], NextToken: token }));
    alarms.push(...(page?.MetricAlarms ?? []));
    token = page?.NextToken;
  } while (token);
  return alarms;
}

/** A multi-report alarm is one whose query groups by report: its contributors name them. */
const groupsByReport = (alarm: MetricAlarm) => (alarm.Metrics ?? []).some((m) => /GROUP BY\s+report\b/i.test(m.Expression ?? ''));

async function alarmItem(cloudWatch: CloudWatchClient, alarm: MetricAlarm, prefix: string, now: Date): Promise<StatusItem> {
  const name = alarm.AlarmName ?? '?';
  const item = `alarm ${name.startsWith(prefix) ? name.slice(prefix.length) : name}`;
  const since = alarm.StateUpdatedTimestamp ? ` for ${formatAge(now.getTime() - alarm.StateUpdatedTimestamp.getTime())}` : '';
  const what = `see ${OPERATIONS} ("Alarms") for what it means and what to do`;
  if (!groupsByReport(alarm)) return { item, verdict: 'TODO', detail: `in ALARM${since}: ${alarm.StateReason ?? ''}; ${what}` };
  let reports: string[];
  try {
    reports = await contributorReports(cloudWatch, name);
  } catch (e) {
    return unknown(item, e, `cloudwatch:DescribeAlarmContributors on ${name}`);
  }
  const cap = reports.length >= 100 ? ' (CloudWatch names at most 100: more may be in breach)' : '';
  const named = reports.length ? `reports ${reports.join(', ')}${cap}` : 'no report named yet (the contributors update within minutes)';
  return { item, verdict: 'TODO', detail: `in ALARM${since}: ${named}; ${what}` };
}

async function contributorReports(cloudWatch: CloudWatchClient, alarmName: string): Promise<string[]> {
  const reports: string[] = [];
  let token: string | undefined;
  do {
    const page = await cloudWatch.send(new DescribeAlarmContributorsCommand({ AlarmName: alarmName, NextToken: token }));
    for (const c of page?.AlarmContributors ?? []) {
      const report = c.ContributorAttributes?.[Dimension.report];
      if (report) reports.push(report);
    }
    token = page?.NextToken;
  } while (token);
  return reports.sort();
}

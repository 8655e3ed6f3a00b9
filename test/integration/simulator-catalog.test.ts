import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import iconv from 'iconv-lite';
import { readReportSources } from '../../functions/core/definitions/catalog-files.js';
import { renderBody } from '../../functions/core/gateway/body-template.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { describeRequest } from '../../functions/core/gateway/request.js';
import { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import { parseLocalDateTime, type ReportWindow } from '../../functions/core/time/window.js';
import { parseReportRequest, startSimulator, type Simulator } from '../../local/simulator/index.js';

/**
 * The simulator serving reports of a catalog by their own body templates (fixture shapes, not the shipped
 * folder): the window read where the template puts it, the answer in the report's delimiter and encoding,
 * and clear refusals. The end-to-end runs are in catalog-reports.test.ts.
 */

const catalog = ReportCatalog.fromSources(readReportSources(fileURLToPath(new URL('../fixtures/report-shapes/', import.meta.url))));
const payouts = catalog.get('payouts_cp1251');
const window: ReportWindow = { start: parseLocalDateTime('2026-11-20'), end: parseLocalDateTime('2026-11-21') };

function call(sim: Simulator, body: unknown): Promise<{ status: number; type: string; bytes: Buffer }> {
  const described = describeRequest({ endpointUrl: sim.url, secret: sim.credentials.hmac, body });
  return new Promise((resolve, reject) => {
    const req = httpRequest(sim.url, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: described.authorization } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), bytes: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(described.body);
  });
}

describe('the simulator serves the reports of its catalog', () => {
  it("answers a report in its own delimiter and encoding, for the window its template carries", async () => {
    const sim = await startSimulator({ reports: catalog.reports, rowsPerDay: 24 });
    try {
      const answer = await call(sim, renderBody(payouts.bodyTemplate, window));
      assert.equal(answer.status, 200);
      assert.equal(answer.type, 'text/csv; charset=windows-1251');
      const text = iconv.decode(answer.bytes, 'windows-1251');
      assert.ok(text.startsWith('"Номер выплаты";"Дата выплаты";"Сумма";'), text.slice(0, 80));
      // The window is the day the body asked for, in the column's own minute-precision pattern.
      const times = [...text.matchAll(/"(\d{2}\.\d{2}\.\d{4} \d{2}:\d{2})"/g)].map((m) => m[1]!);
      assert.ok(times.length >= 24);
      assert.ok(times.every((t) => t.startsWith('20.11.2026')), times.join(' '));
    } finally {
      await sim.close();
    }
  });

  it('reads a date-only "to" as its 00:00 by default, as the docs teach; --period-to whole-day reads it as that whole day', async () => {
    const dateOnly = {
      ...payouts,
      bodyTemplate: {
        ...payouts.bodyTemplate,
        inputReportParameters: [
          { type: 'INPUT_TEXT', name: 'periodFrom', value: '{{window.start:dd.MM.yyyy}}' },
          { type: 'INPUT_TEXT', name: 'periodTo', value: '{{window.end:dd.MM.yyyy}}' },
        ],
      },
    };
    const days = async (periodTo?: 'whole-day') => {
      const sim = await startSimulator({ reports: [dateOnly], rowsPerDay: 24, periodTo });
      try {
        const answer = await call(sim, renderBody(dateOnly.bodyTemplate, window));
        assert.equal(answer.status, 200);
        const text = iconv.decode(answer.bytes, 'windows-1251');
        return [...new Set([...text.matchAll(/"(\d{2}\.\d{2}\.\d{4}) \d{2}:\d{2}"/g)].map((m) => m[1]!))].sort();
      } finally {
        await sim.close();
      }
    };
    // The body says 20.11.2026 to 21.11.2026: [20.11, 21.11) read as instants; 20.11 through 21.11 read as whole days.
    assert.deepEqual(await days(), ['20.11.2026']);
    assert.deepEqual(await days('whole-day'), ['20.11.2026', '21.11.2026']);
  });

  it('reads a date-only "to" as the definition\'s "periodTo" says, unless --period-to says otherwise for every report', async () => {
    const raw = (readReportSources(fileURLToPath(new URL('../fixtures/report-shapes/', import.meta.url))).find((r) => r.file.endsWith('payouts_cp1251.json')) as { raw: object }).raw;
    const wholeDay = ReportCatalog.fromSources([
      {
        file: 'whole_day.json',
        raw: {
          ...raw,
          id: 'whole_day',
          periodTo: 'whole-day',
          bodyTemplate: {
            ...payouts.bodyTemplate,
            inputReportParameters: [
              { type: 'INPUT_TEXT', name: 'periodFrom', value: '{{window.start:dd.MM.yyyy}}' },
              { type: 'INPUT_TEXT', name: 'periodTo', value: '{{window.last:dd.MM.yyyy}}' },
            ],
          },
        },
      },
    ]).get('whole_day');
    const days = async (periodTo?: 'instant') => {
      const sim = await startSimulator({ reports: [wholeDay], rowsPerDay: 24, periodTo });
      try {
        const answer = await call(sim, renderBody(wholeDay.bodyTemplate, window));
        if (answer.status !== 200) return answer.status;
        const text = iconv.decode(answer.bytes, 'windows-1251');
        return [...new Set([...text.matchAll(/"(\d{2}\.\d{2}\.\d{4}) \d{2}:\d{2}"/g)].map((m) => m[1]!))].sort();
      } finally {
        await sim.close();
      }
    };
    // The body says 20.11.2026 to 20.11.2026: the window's day for a whole-day provider; one instant, no rows, for an instant one.
    assert.deepEqual(await days(), ['20.11.2026']);
    assert.deepEqual(await days('instant'), []);
  });

  it('reads the window where the template puts it, and says what is wrong when it is not there', () => {
    const body = renderBody(payouts.bodyTemplate, window) as { inputReportParameters: Array<{ value: string }> };
    const ok = parseReportRequest('application/json', JSON.stringify(body), catalog.reports);
    assert.ok(ok.ok);
    assert.deepEqual(ok.request.window, window, 'end from {{window.last}} plus a second');
    body.inputReportParameters[0]!.value = '2026-11-20 00:00';
    const bad = parseReportRequest('application/json', JSON.stringify(body), catalog.reports);
    assert.ok(!bad.ok);
    assert.match(bad.problem, /inputReportParameters\[0\]\.value "2026-11-20 00:00" is not a date-time of the form dd\.MM\.yyyy HH:mm/);
    const unknown = parseReportRequest('application/json', JSON.stringify({ ...body, reportIdentifier: 'nope' }), catalog.reports);
    assert.ok(!unknown.ok);
    assert.match(unknown.problem, /Unknown reportIdentifier "nope"; this simulator serves custom-transactions-report, payouts-report, settlements-report/);
  });

  it('refuses a --sample for a report it does not serve, or a file it cannot read, at start', async () => {
    await assert.rejects(startSimulator({ reports: catalog.reports, samples: { chargebacks: 'x.csv' } }), (e) =>
      e instanceof ConfigurationError && /--sample chargebacks=x\.csv: there is no report "chargebacks"/.test(e.message));
    await assert.rejects(startSimulator({ reports: catalog.reports, samples: { payouts_cp1251: '/nonexistent/file.csv' } }), (e) =>
      e instanceof ConfigurationError && /cannot read the file \(ENOENT\)/.test(e.message));
  });
});

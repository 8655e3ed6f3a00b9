import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterEach, describe, it } from 'node:test';
import { buildCommit, createdBy, PIPELINE_NAME, PIPELINE_VERSION } from '../../functions/core/build-info.js';

/** The Parquet footer's created_by (build-info.ts): parquet-java's `<application> version <semver> (build <hash>)`. */

const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

describe('buildCommit', () => {
  const saved = process.env.PIPELINE_BUILD_COMMIT;
  afterEach(() => {
    if (saved === undefined) delete process.env.PIPELINE_BUILD_COMMIT;
    else process.env.PIPELINE_BUILD_COMMIT = saved;
  });

  it('a 7-40 digit hex commit, trimmed and lower-cased', () => {
    assert.equal(buildCommit('abcdef0'), 'abcdef0');
    assert.equal(buildCommit(' F00DBABE1234\n'), 'f00dbabe1234');
    assert.equal(buildCommit('0123456789abcdef0123456789abcdef01234567'), '0123456789abcdef0123456789abcdef01234567');
  });

  it('anything else is "unknown": too short, too long, not hex, text around the hash', () => {
    for (const bad of ['abcdef', '0123456789abcdef0123456789abcdef012345678', 'abcdefg', 'xabcdef0', 'abcdef0x', 'abc def0', 'main', ' ', '']) {
      assert.equal(buildCommit(bad), 'unknown', JSON.stringify(bad));
    }
  });

  it('reads PIPELINE_BUILD_COMMIT when given no value', () => {
    process.env.PIPELINE_BUILD_COMMIT = '1234567890AB';
    assert.equal(buildCommit(), '1234567890ab');
    assert.equal(createdBy(), `paynet-reports-pipeline version ${version} (build 1234567890ab)`);
    delete process.env.PIPELINE_BUILD_COMMIT;
    assert.equal(buildCommit(), 'unknown');
  });
});

describe('createdBy', () => {
  it('says the pipeline, the package version and the build', () => {
    assert.equal(PIPELINE_NAME, 'paynet-reports-pipeline');
    assert.equal(PIPELINE_VERSION, version);
    assert.equal(createdBy('0123abc'), `paynet-reports-pipeline version ${version} (build 0123abc)`);
  });
});

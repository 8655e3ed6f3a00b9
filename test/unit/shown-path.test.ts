import assert from 'node:assert/strict';
import { join, resolve, sep } from 'node:path';
import { describe, it } from 'node:test';
import { showPath } from '../../functions/core/shown-path.js';

/** A path as the user can type it from here (shown-path.ts): relative under the working directory, else absolute. */

describe('showPath', () => {
  const cwd = process.cwd();

  it('under the working directory: relative', () => {
    assert.equal(showPath(join(cwd, 'config', 'reports', 'a.json')), `config${sep}reports${sep}a.json`);
    assert.equal(showPath('config/reports/a.json'), `config${sep}reports${sep}a.json`);
  });

  it('the working directory itself: "."', () => {
    assert.equal(showPath(cwd), '.');
    assert.equal(showPath(`${cwd}${sep}`), '.');
  });

  it('outside it: absolute, resolved', () => {
    assert.equal(showPath(join(cwd, '..', 'elsewhere.json')), resolve(cwd, '..', 'elsewhere.json'));
    assert.equal(showPath('../elsewhere.json'), resolve(cwd, '..', 'elsewhere.json'));
    assert.equal(showPath('/'), '/');
    assert.equal(showPath('..'), resolve(cwd, '..'));
  });

  it('a name that merely starts with dots is still under it', () => {
    assert.equal(showPath(join(cwd, '..hidden')), '..hidden');
  });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tokenize } from '../src/core/highlight';

test('tokens cover the SQL exactly and classify its parts', () => {
  const sql = "SELECT name, COUNT(*) AS n -- total\nFROM \"my table\" WHERE x >= 1.5 AND y = 'it''s' /* c */";
  const tokens = tokenize(sql);
  assert.equal(tokens.map(t => t.text).join(''), sql);
  const of = (type: string) => tokens.filter(t => t.type === type).map(t => t.text);
  assert.deepEqual(of('keyword'), ['SELECT', 'COUNT', 'AS', 'FROM', 'WHERE', 'AND']);
  assert.deepEqual(of('string'), ["'it''s'"]);
  assert.deepEqual(of('quoted'), ['"my table"']);
  assert.deepEqual(of('number'), ['1.5']);
  assert.deepEqual(of('comment'), ['-- total', '/* c */']);
  assert.deepEqual(of('operator'), ['*', '>=', '=']);
});

test('an unterminated string or comment runs to the end', () => {
  for (const sql of ["select 'abc", 'select /* abc', 'select "a']) {
    const tokens = tokenize(sql);
    assert.equal(tokens.map(t => t.text).join(''), sql);
    assert.equal(tokens.length, 3);
  }
});

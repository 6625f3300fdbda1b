import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  alternativeText,
  applyEvent,
  Conversation,
  deserializeChat,
  LIVE_TEXT_KEPT,
  newTurn,
  pickAlternative,
  selectHistory,
  serializeChat,
  shownSql,
  stepLabel,
  stepsSummary,
  Turn,
  turnErrorText,
  withMoreRows
} from '../src/core/conversation';

function finished(question: string, connection: string, status: Turn['status'], sql: string | null): Turn {
  return { ...newTurn(question, connection), status, sql };
}

test('a successful run reduces to steps, SQL, cell and a bounded result', () => {
  let t = newTurn('how many users?', 'db');
  t = applyEvent(
    t,
    {
      type: 'started',
      question: 'how many users?',
      connection: 'db',
      dialect: 'duckdb',
      model: 'scripted:x',
      max_iterations: 5
    },
    3
  );
  t = applyEvent(
    t,
    { type: 'reply', iteration: 1, max_iterations: 5, sql: 'select count(*) from user', final: false },
    3
  );
  t = applyEvent(
    t,
    {
      type: 'attempt',
      n: 1,
      max_iterations: 5,
      sql: 'select count(*) from user',
      ok: false,
      error_kind: 'CatalogError',
      error: 'no table user'
    },
    3
  );
  t = applyEvent(
    t,
    {
      type: 'attempt',
      n: 2,
      max_iterations: 5,
      sql: 'select count(*) from users',
      ok: true,
      row_count: 1,
      candidates: 3
    },
    3
  );
  t = applyEvent(
    t,
    {
      type: 'done',
      status: 'success',
      sql: 'select count(*) from users',
      cell: '%%sql --conn db\nselect count(*) from users',
      columns: ['n'],
      rows: [[1], [2], [3], [4], [5]],
      row_count: 5,
      connection: 'db'
    },
    3
  );
  assert.equal(t.status, 'success');
  assert.deepEqual(
    t.steps.map(s => s.kind),
    ['note', 'reply', 'attempt', 'attempt']
  );
  assert.equal(t.steps[2].ok, false);
  assert.equal(stepLabel(t.steps[2]), 'Attempt 1 of 5: ✗ CatalogError: no table user');
  assert.equal(stepLabel(t.steps[3]), 'Attempt 2 of 5: ✓ 1 row (3 candidates tried)');
  assert.match(stepLabel(t.steps[0]), /Asking scripted:x on db \(duckdb\), up to 5 attempts/);
  assert.equal(t.cell, '%%sql --conn db\nselect count(*) from users');
  assert.deepEqual(t.rows, [[1], [2], [3]]);
  assert.equal(t.rowCount, 5);
  assert.equal(turnErrorText(t), null);
});

test('reply steps say what the model did; a failed model call is shortened', () => {
  let t = newTurn('q', 'db');
  t = applyEvent(t, { type: 'reply', iteration: 1, clarify: ['Which year?'] }, 10);
  t = applyEvent(t, { type: 'reply', iteration: 2, final: true, sql: 'select 1' }, 10);
  t = applyEvent(t, { type: 'reply', iteration: 3, model_error: 'x'.repeat(300) }, 10);
  assert.deepEqual(
    t.steps.map(s => s.kind),
    ['reply', 'reply', 'reply']
  );
  assert.equal(stepLabel(t.steps[0]), 'The model asks for a clarification');
  assert.equal(stepLabel(t.steps[1]), 'The model accepts the result');
  assert.equal(t.steps[1].sql, null);
  assert.equal(stepLabel(t.steps[2]), `The model call failed: ${'x'.repeat(120)}…`);
});

test("a memory event is a note between the passes, in the kernel's words", () => {
  let t = newTurn('How many paid orders?', 'db');
  t = applyEvent(
    t,
    { type: 'attempt', n: 1, max_iterations: 5, sql: 'select count(*) from orders', ok: true, row_count: 1 },
    10
  );
  t = applyEvent(
    t,
    {
      type: 'memory',
      examples: 3,
      level: 'low',
      text: 'Not sure of that answer (low confidence): asking again with 3 remembered answers of this database as examples…'
    },
    10
  );
  t = applyEvent(
    t,
    {
      type: 'attempt',
      n: 1,
      max_iterations: 5,
      sql: "select count(*) from orders where status = 'paid'",
      ok: true,
      row_count: 1
    },
    10
  );
  assert.deepEqual(
    t.steps.map(s => s.kind),
    ['attempt', 'note', 'attempt']
  );
  assert.equal(
    stepLabel(t.steps[1]),
    'Not sure of that answer (low confidence): asking again with 3 remembered answers of this database as examples…'
  );
  assert.equal(t.sql, "select count(*) from orders where status = 'paid'");
  assert.equal(stepsSummary(t), '2 attempts · asked again with 3 remembered answers');
  assert.equal(
    stepsSummary(deserializeChat(serializeChat([t], 10))[0]),
    '2 attempts · asked again with 3 remembered answers'
  );
  // without the kernel's text (fields only): a line of the panel's own
  const u = applyEvent(newTurn('q', 'db'), { type: 'memory', examples: 1 }, 10);
  assert.equal(
    stepLabel(u.steps[0]),
    'Not sure of that answer: asking again with 1 remembered answer of this database as examples…'
  );
  // the second pass found no answer: a second note, and the first answer stands
  let v = applyEvent(
    newTurn('q', 'db'),
    { type: 'attempt', n: 1, max_iterations: 5, sql: 'select 1', ok: true, row_count: 1 },
    10
  );
  v = applyEvent(v, { type: 'memory', examples: 2, level: 'low' }, 10);
  v = applyEvent(
    v,
    { type: 'attempt', n: 1, max_iterations: 5, sql: 'select nope', ok: false, error_kind: 'syntax' },
    10
  );
  v = applyEvent(v, { type: 'memory', examples: 2, level: 'low', kept_first: true }, 10);
  v = applyEvent(v, { type: 'done', status: 'success', sql: 'select 1', rows: [[1]], columns: ['1'] }, 10);
  assert.deepEqual(
    v.steps.map(s => s.kind),
    ['attempt', 'note', 'attempt', 'note']
  );
  assert.equal(
    stepLabel(v.steps[3]),
    'No answer found with the remembered answers: the first answer stands.'
  );
  assert.equal(v.sql, 'select 1');
  assert.equal(stepsSummary(v), '2 attempts · asked again with 2 remembered answers, first answer kept');
  assert.equal(
    stepsSummary(deserializeChat(serializeChat([v], 10))[0]),
    '2 attempts · asked again with 2 remembered answers, first answer kept'
  );
});

test('applyEvent does not modify the turn it is given', () => {
  const t = newTurn('q', 'db');
  const next = applyEvent(t, { type: 'attempt', n: 1, ok: true, row_count: 0 }, 10);
  assert.equal(t.steps.length, 0);
  assert.equal(next.steps.length, 1);
});

test('stopped, failed, error and clarification runs', () => {
  const stopped = applyEvent(newTurn('q', 'db'), { type: 'done', status: 'stopped' }, 10);
  assert.equal(turnErrorText(stopped), 'Stopped.');
  const failed = applyEvent(
    newTurn('q', 'db'),
    { type: 'done', status: 'failed', stop_reason: 'max_iterations' },
    10
  );
  assert.equal(turnErrorText(failed), 'No working query: max_iterations.');
  const error = applyEvent(
    newTurn('q', 'db'),
    {
      type: 'done',
      status: 'error',
      error: { kind: 'ModelError', message: 'The model timed out.', hint: 'Try again.' }
    },
    10
  );
  assert.equal(turnErrorText(error), 'The model timed out. Try again.');
  const clar = applyEvent(
    newTurn('q', 'db'),
    { type: 'done', status: 'needs_clarification', questions: ['Which year?', ''] },
    10
  );
  assert.deepEqual(clar.questions, ['Which year?']);
  assert.equal(turnErrorText(clar), null);
});

test('history: finished turns of the connection, oldest first, bounded, no errors', () => {
  const turns = [
    finished('a', 'db', 'success', 'select 1'),
    finished('b', 'other', 'success', 'select 2'),
    finished('c', 'db', 'error', null),
    finished('d', 'db', 'needs_clarification', null),
    finished('e', 'db', 'failed', 'select x'),
    newTurn('running', 'db')
  ];
  assert.deepEqual(selectHistory(turns, 'db'), [
    { question: 'a', status: 'success', sql: 'select 1' },
    { question: 'd', status: 'needs_clarification', sql: null },
    { question: 'e', status: 'failed', sql: 'select x' }
  ]);
  assert.deepEqual(
    selectHistory(turns, 'db', 1).map(h => h.question),
    ['e']
  );
  assert.deepEqual(selectHistory([], 'db'), []);
});

test('metadata round trip keeps the turn, bounds rows, marks running turns interrupted', () => {
  let done = newTurn('how many?', 'db');
  done = applyEvent(
    done,
    { type: 'attempt', n: 1, max_iterations: 5, sql: 'select 1', ok: true, row_count: 1 },
    10
  );
  done = applyEvent(
    done,
    {
      type: 'done',
      status: 'success',
      sql: 'select 1',
      cell: 'c',
      columns: ['x'],
      rows: [[1], [2], [3]],
      row_count: 3
    },
    10
  );
  const running = newTurn('still going', 'db');
  const saved = JSON.parse(JSON.stringify(serializeChat([done, running], 2)));
  assert.equal(saved.version, 1);
  assert.deepEqual(saved.turns[0].rows, [[1], [2]]);
  const back = deserializeChat(saved);
  assert.equal(back.length, 2);
  assert.equal(back[0].question, 'how many?');
  assert.equal(back[0].status, 'success');
  assert.equal(back[0].sql, 'select 1');
  assert.equal(back[0].cell, 'c');
  assert.equal(back[0].steps.length, 1);
  assert.equal(back[0].steps[0].ok, true);
  assert.equal(back[1].status, 'error');
  assert.match(turnErrorText(back[1]) ?? '', /interrupted/);
  assert.deepEqual(deserializeChat({ version: 2, turns: [] }), []);
  assert.deepEqual(deserializeChat(null), []);
  assert.deepEqual(deserializeChat({ version: 1, turns: [null, { question: 3 }] }), []);
});

test('Conversation routes events by run id and ignores other runs', () => {
  const conv = new Conversation();
  const seen: string[] = [];
  conv.onChange(c => seen.push(c.kind === 'reset' ? 'reset' : c.turn.status));
  const t = conv.start('q', 'db');
  assert.equal(conv.running?.id, t.id);
  conv.bindRun(t.id, 'r1');
  assert.equal(conv.applyEvent('r2', { type: 'done', status: 'success' }, 10), null);
  conv.applyEvent('r1', { type: 'attempt', n: 1, ok: true, row_count: 1 }, 10);
  conv.applyEvent('r1', { type: 'done', status: 'success', sql: 'select 1' }, 10);
  // events after done are ignored
  conv.applyEvent('r1', { type: 'attempt', n: 2, ok: false }, 10);
  assert.equal(conv.turns[0].status, 'success');
  assert.equal(conv.turns[0].steps.length, 1);
  assert.equal(conv.running, null);
  assert.ok(conv.hasRun('r1'));
  const t2 = conv.start('again', 'db');
  conv.fail({ kind: 'kernel_restarted', message: 'The kernel restarted.' });
  assert.equal(conv.find(t2.id)?.status, 'error');
  const t3 = conv.start('lost', 'db');
  conv.remove(t3.id);
  assert.equal(conv.turns.length, 2);
  assert.deepEqual(seen.slice(0, 3), ['running', 'running', 'running']);
});

test('the other readings of an answer are kept, saved with it and read back; a malformed one is dropped', () => {
  const other = {
    label: '1. 1 draft, 1 row',
    sql: "SELECT count(*) FROM orders WHERE status = 'paid'",
    drafts: 1,
    row_count: 1,
    columns: ['n'],
    rows: [[2]],
    cell: "%%sql --conn shop\n-- another reading\nSELECT count(*) FROM orders WHERE status = 'paid'\n"
  };
  const done = applyEvent(
    newTurn('How many customers?', 'shop'),
    {
      type: 'done',
      status: 'success',
      sql: 'SELECT count(*) FROM customers',
      cell: '%%sql --conn shop\nSELECT count(*) FROM customers\n',
      alternatives: [other, { label: 'no sql' } as never]
    },
    10
  );
  assert.deepEqual(done.alternatives, [other]);
  const back = deserializeChat(JSON.parse(JSON.stringify(serializeChat([done], 10))))[0];
  assert.deepEqual(back.alternatives, [other]);
  // an answer that did not succeed offers none, and a turn saved without any reads back empty
  const failed = applyEvent(
    newTurn('q', 'shop'),
    { type: 'done', status: 'failed', alternatives: [other] },
    10
  );
  assert.deepEqual(failed.alternatives, []);
  assert.deepEqual(deserializeChat(serializeChat([failed], 10))[0].alternatives, []);

  // picked: the reading becomes the answer, the first answer another reading, the rating goes
  const picked = pickAlternative({ ...done, remembered: 7, columns: ['n'], rows: [[5]], rowCount: 1 }, 0);
  assert.equal(picked.sql, other.sql);
  assert.equal(picked.cell, other.cell);
  assert.deepEqual(picked.rows, [[2]]);
  assert.equal(picked.confidence, null);
  assert.equal(picked.remembered, null);
  assert.deepEqual(
    picked.alternatives.map(a => [alternativeText(a), a.sql]),
    [['the answer kept first', 'SELECT count(*) FROM customers']]
  );
  assert.equal(alternativeText(other), '1 draft, 1 row');
  assert.equal(pickAlternative(done, 5), done); // no such reading: unchanged
});

test("an answer's explanation: a step while it is written, kept with the answer, saved and read back", () => {
  let t = newTurn('How many customers?', 'shop');
  t = applyEvent(t, { type: 'explaining', label: 'Explaining the answer…' }, 10);
  assert.deepEqual(t.steps, [{ kind: 'note', text: 'Explaining the answer…' }]);
  const text = 'This counts every customer, with no filter. There are 3.';
  t = applyEvent(
    t,
    { type: 'done', status: 'success', sql: 'SELECT count(*) FROM customers', cell: 'x', explanation: text },
    10
  );
  assert.equal(t.explanation, text);
  const back = deserializeChat(JSON.parse(JSON.stringify(serializeChat([t], 10))))[0];
  assert.equal(back.explanation, text);
  // none without an answer; a turn saved without one reads back without one
  const failed = applyEvent(newTurn('q', 'shop'), { type: 'done', status: 'failed', explanation: text }, 10);
  assert.equal(failed.explanation, null);
  assert.equal(deserializeChat(serializeChat([failed], 10))[0].explanation, null);
  // another reading picked as the answer: the explanation was of the first one, it goes
  const other = {
    label: '1. 1 draft, 1 row',
    sql: 'SELECT 2',
    drafts: 1,
    row_count: 1,
    columns: ['n'],
    rows: [[2]],
    cell: 'y'
  };
  assert.equal(pickAlternative({ ...t, alternatives: [other] }, 0).explanation, null);
});

test('a running turn shows what it does now and the text as it is written, none of it saved', () => {
  let t = newTurn('How many customers?', 'shop');
  assert.equal(typeof t.startedAt, 'number');
  t = applyEvent(
    t,
    { type: 'phase', phase: 'writing', call: 1, purpose: 'answer', label: 'Writing a query…' },
    10
  );
  assert.deepEqual(t.live, { label: 'Writing a query…', call: 1, text: '' });
  t = applyEvent(t, { type: 'text', call: 1, offset: 0, text: '```sql\nSELECT' }, 10);
  t = applyEvent(t, { type: 'text', call: 1, offset: 13, text: ' count(*)' }, 10);
  assert.equal(t.live?.text, '```sql\nSELECT count(*)');
  // the call tried again: its text so far is void
  t = applyEvent(t, { type: 'text', call: 1, offset: 0, text: '```sql' }, 10);
  assert.equal(t.live?.text, '```sql');
  // another phase keeps the text; a new call starts empty
  t = applyEvent(t, { type: 'phase', phase: 'running', label: 'Running the query…' }, 10);
  assert.deepEqual(t.live, { label: 'Running the query…', call: 1, text: '```sql' });
  t = applyEvent(
    t,
    {
      type: 'phase',
      phase: 'writing',
      call: 2,
      purpose: 'draft',
      draft: 1,
      drafts: 3,
      label: 'Writing draft 1 of up to 3…'
    },
    10
  );
  assert.equal(t.live?.text, '');
  // text of an earlier call arriving late does not mix with the new one
  t = applyEvent(t, { type: 'text', call: 2, offset: 0, text: 'SELECT 2' }, 10);
  assert.equal(t.live?.text, 'SELECT 2');
  assert.equal(t.steps.length, 0); // not steps
  t = applyEvent(t, { type: 'done', status: 'success', sql: 'SELECT 1', cell: 'x' }, 10);
  assert.equal(t.live, null);
  const saved = JSON.stringify(serializeChat([t], 10));
  assert.ok(!saved.includes('Writing') && !saved.includes('startedAt'), saved);
});

test('the live text keeps its end when it grows long', () => {
  let t = newTurn('q', 'shop');
  t = applyEvent(t, { type: 'phase', phase: 'writing', call: 1, label: 'Writing a query…' }, 10);
  const long = 'x'.repeat(LIVE_TEXT_KEPT) + 'END';
  t = applyEvent(t, { type: 'text', call: 1, offset: 0, text: long }, 10);
  assert.equal(t.live?.text.length, LIVE_TEXT_KEPT);
  assert.ok(t.live?.text.endsWith('END'));
});

test('an answer reads in its pretty form and draws its chart; more rows follow on', () => {
  let t = newTurn('Orders per country?', 'shop');
  const chart = { mark: 'bar', data: { values: [{ country: 'DE', n: 2 }] } };
  t = applyEvent(
    t,
    {
      type: 'done',
      status: 'success',
      sql: 'SELECT country, count(*) AS n FROM orders GROUP BY 1',
      sql_pretty: 'SELECT\n  country,\n  COUNT(*) AS n\nFROM orders\nGROUP BY 1',
      cell: '%%sql\n...',
      chart,
      chart_cell: '%%sql --chart\n...',
      columns: ['country', 'n'],
      rows: [['DE', 2]],
      row_count: 3
    },
    10
  );
  assert.equal(shownSql(t), 'SELECT\n  country,\n  COUNT(*) AS n\nFROM orders\nGROUP BY 1');
  assert.deepEqual(t.chart, chart);
  assert.equal(t.chartCell, '%%sql --chart\n...');
  // the pretty SQL is saved; the chart (its data inlined) is not
  const back = deserializeChat(JSON.parse(JSON.stringify(serializeChat([t], 10))))[0];
  assert.equal(shownSql(back), t.sqlPretty);
  assert.equal(back.chart ?? null, null);
  // a page of rows that follows on is added; one that does not is ignored
  const more = withMoreRows(
    t,
    1,
    [
      ['FR', 1],
      ['US', 4]
    ],
    3
  );
  assert.deepEqual(more.rows, [
    ['DE', 2],
    ['FR', 1],
    ['US', 4]
  ]);
  assert.equal(withMoreRows(t, 5, [['XX', 0]], 3), t);
  // without a pretty form, the SQL as it ran
  const plain = applyEvent(
    newTurn('q', 'shop'),
    { type: 'done', status: 'success', sql: 'SELECT 1', cell: 'x' },
    10
  );
  assert.equal(shownSql(plain), 'SELECT 1');
});

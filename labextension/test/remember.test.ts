import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  confidenceAriaLabel,
  confidenceLabel,
  confidenceTooltip,
  parseConfidence,
  reasonText
} from '../src/core/confidence';
import {
  answerSql,
  applyEvent,
  canRemember,
  Conversation,
  ConversationChange,
  deserializeChat,
  newTurn,
  rememberFields,
  serializeChat,
  Turn
} from '../src/core/conversation';
import { Confidence, hasFeature } from '../src/core/protocol';

const SQL = 'select count(*) as n from orders';
const CELL = `%%sql --conn shop\n${SQL}\n`;
const LOW: Confidence = {
  level: 'low',
  score: 0.31,
  reasons: ['1 of 3 drafts gave this result', 'the result is empty']
};

function done(fields: Record<string, unknown>): Turn {
  const t = newTurn('How many orders?', 'shop');
  return applyEvent(
    t,
    { type: 'done', status: 'success', sql: SQL, cell: CELL, connection: 'shop', ...fields },
    10
  );
}

test('confidence: parsed from the done event, bounded, malformed values dropped', () => {
  assert.deepEqual(parseConfidence(LOW), LOW);
  assert.deepEqual(parseConfidence({ level: 'HIGH', score: 1.7, reasons: ['ok', '', 3] }), {
    level: 'high',
    score: 1,
    reasons: ['ok']
  });
  assert.deepEqual(parseConfidence({ level: 'medium' }), { level: 'medium', score: null, reasons: [] });
  assert.equal(parseConfidence({ level: 'certain', score: 1 }), null);
  assert.equal(parseConfidence(null), null);
  assert.equal(parseConfidence('high'), null);
  assert.equal(parseConfidence([LOW]), null);
});

test('confidence: the badge text, accessible name and tooltip', () => {
  const low = parseConfidence(LOW)!;
  assert.equal(confidenceLabel(low), 'Low confidence — check this answer');
  assert.equal(confidenceLabel({ level: 'high', score: 0.9, reasons: [] }), 'High confidence');
  assert.equal(confidenceLabel({ level: 'medium', score: null, reasons: [] }), 'Medium confidence');
  assert.equal(
    confidenceAriaLabel(low),
    'Low confidence — check this answer (score 31%); 2 reasons, expand to read them'
  );
  assert.equal(confidenceAriaLabel({ level: 'high', score: null, reasons: [] }), 'High confidence');
  assert.equal(
    confidenceTooltip(low),
    'Low confidence — check this answer (31%)\n• 1 of 3 drafts gave this result\n• The result is empty'
  );
});

test('reasons read as sentences', () => {
  assert.equal(reasonText('the result is empty'), 'The result is empty');
  assert.equal(reasonText('  '), '');
});

test('a done event with SQL keeps its confidence; none, null or no SQL keeps nothing', () => {
  assert.deepEqual(done({ confidence: LOW }).confidence, LOW);
  assert.equal(done({}).confidence, null);
  assert.equal(done({ confidence: null }).confidence, null);
  const failed = applyEvent(
    newTurn('q', 'shop'),
    { type: 'done', status: 'failed', sql: null, cell: null, confidence: LOW },
    10
  );
  assert.equal(failed.confidence, null);
});

test('a clarification with a best query offers that SQL; one without offers nothing', () => {
  const best = applyEvent(
    newTurn('Orders that month?', 'shop'),
    {
      type: 'done',
      status: 'needs_clarification',
      sql: SQL,
      cell: CELL,
      questions: ['Which month?'],
      confidence: LOW
    },
    10
  );
  assert.equal(answerSql(best), SQL);
  assert.equal(best.cell, CELL);
  assert.deepEqual(best.confidence, LOW);
  assert.equal(canRemember(best), true);

  // a failed attempt's SQL before the question is no answer
  let none = newTurn('Orders that month?', 'shop');
  none = applyEvent(none, { type: 'attempt', n: 1, sql: 'select bad', ok: false, error: 'no' }, 10);
  none = applyEvent(
    none,
    { type: 'done', status: 'needs_clarification', sql: null, cell: null, questions: ['Which?'] },
    10
  );
  assert.equal(answerSql(none), null);
  assert.equal(canRemember(none), false);
  assert.equal(rememberFields(none), null);

  for (const status of ['failed', 'stopped', 'error'] as const) {
    assert.equal(answerSql({ ...newTurn('q', 'shop'), status, sql: SQL, cell: CELL }), null);
  }
});

test('remember: the run id with the answer as a fallback; once remembered, not again', () => {
  const conv = new Conversation();
  const t = conv.start('How many orders?', 'shop');
  conv.bindRun(t.id, 'run-1');
  conv.applyEvent('run-1', { type: 'done', status: 'success', sql: SQL, cell: CELL, connection: 'shop' }, 10);
  const turn = conv.find(t.id)!;
  assert.deepEqual(rememberFields(turn), {
    run: 'run-1',
    question: 'How many orders?',
    sql: SQL,
    connection: 'shop'
  });
  assert.equal(canRemember(turn), true);

  const seen: ConversationChange[] = [];
  conv.onChange(x => seen.push(x));
  conv.setRemember(t.id, { remembering: true });
  assert.equal(canRemember(conv.find(t.id)!), false); // a second press while it goes: nothing
  conv.setRemember(t.id, { remembering: false, remembered: 7 });
  assert.equal(conv.find(t.id)!.remembered, 7);
  assert.equal(canRemember(conv.find(t.id)!), false);
  assert.deepEqual(
    seen.map(c => c.kind),
    ['updated', 'updated']
  );

  // a reloaded turn has no run: the answer itself goes
  const reloaded = deserializeChat(serializeChat([{ ...turn, remembered: null }], 10))[0];
  assert.deepEqual(rememberFields(reloaded), { question: 'How many orders?', sql: SQL, connection: 'shop' });
});

test('the saved chat keeps confidence and the remembered state, not the transient ones', () => {
  const t: Turn = { ...done({ confidence: LOW }), remembered: 12, remembering: true, rememberError: 'x' };
  const plain = done({});
  const saved = serializeChat([t, plain], 10);
  const json = JSON.parse(JSON.stringify(saved));
  assert.deepEqual(json.turns[0].confidence, LOW);
  assert.equal(json.turns[0].remembered, 12);
  assert.equal('remembering' in json.turns[0] || 'rememberError' in json.turns[0], false);
  assert.equal('confidence' in json.turns[1] || 'remembered' in json.turns[1], false);
  const [back, back2] = deserializeChat(json);
  assert.deepEqual(back.confidence, LOW);
  assert.equal(back.remembered, 12);
  assert.equal(back.remembering, undefined);
  assert.equal(canRemember(back), false);
  assert.equal(back2.confidence, null);
  assert.equal(back2.remembered, null);
  // a hand-edited value is dropped, not trusted
  json.turns[0].remembered = 'yes';
  json.turns[0].confidence = { level: 'sure' };
  const [bad] = deserializeChat(json);
  assert.equal(bad.remembered, null);
  assert.equal(bad.confidence, null);
});

test('hasFeature reads the hello reply; an older kernel names none', () => {
  const base = { protocol: 1, connections: [], active: null };
  assert.equal(hasFeature({ ...base, features: ['confidence', 'remember'] }, 'remember'), true);
  assert.equal(hasFeature({ ...base, features: ['confidence'] }, 'remember'), false);
  assert.equal(hasFeature(base, 'remember'), false);
  assert.equal(hasFeature(null, 'remember'), false);
});

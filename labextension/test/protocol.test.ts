import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  describeError,
  parseKernelMessage,
  RequestError,
  RequestTracker,
  withHint,
  writeAccessIndicator
} from '../src/core/protocol';

test('the write-access indicator: short label, full sentence as tooltip, state', () => {
  const writable = writeAccessIndicator({
    can_write: true,
    label: 'can write 37 tables',
    summary: 'this role (app) can write 37 tables — the agent stays read-only; a read-only role is safer'
  });
  assert.deepEqual(writable, {
    text: 'can write 37 tables',
    title: 'this role (app) can write 37 tables — the agent stays read-only; a read-only role is safer',
    state: 'writable'
  });
  assert.equal(
    writeAccessIndicator({ can_write: false, label: 'read-only role', summary: '' })?.state,
    'read-only'
  );
  const unknown = writeAccessIndicator({ can_write: null, label: 'write access unknown', summary: 'x' });
  assert.equal(unknown?.state, 'unknown');
  // an older kernel sends no write_access: no indicator
  assert.equal(writeAccessIndicator(undefined), null);
  assert.equal(writeAccessIndicator(null), null);
});

test('requests carry v, type and a fresh id; replies settle them once', async () => {
  const tracker = new RequestTracker('p');
  const a = tracker.make('hello', { protocol: 1 });
  const b = tracker.make('connections');
  assert.equal(a.message.v, 1);
  assert.equal(a.message.type, 'hello');
  assert.equal(a.message.protocol, 1);
  assert.notEqual(a.message.id, b.message.id);
  assert.equal(tracker.size, 2);
  assert.equal(
    tracker.handleReply({ v: 1, type: 'reply', id: String(a.message.id), ok: true, data: { active: 'db' } }),
    true
  );
  assert.deepEqual(await a.reply, { active: 'db' });
  // a second reply of the same id is ignored
  assert.equal(
    tracker.handleReply({ v: 1, type: 'reply', id: String(a.message.id), ok: true, data: {} }),
    false
  );
  tracker.handleReply({
    v: 1,
    type: 'reply',
    id: String(b.message.id),
    ok: false,
    error: { kind: 'NoActiveConnectionError', message: 'No connection.', hint: 'Run %sql first.' }
  });
  await assert.rejects(b.reply, (e: unknown) => {
    assert.ok(e instanceof RequestError);
    assert.equal(e.kind, 'NoActiveConnectionError');
    assert.equal(e.hint, 'Run %sql first.');
    return true;
  });
  assert.equal(tracker.size, 0);
});

test('failAll rejects every waiting request (kernel restart)', async () => {
  const tracker = new RequestTracker();
  const r1 = tracker.make('schema').reply;
  const r2 = tracker.make('ask', { question: 'q' }).reply;
  tracker.failAll({ kind: 'kernel_restarted', message: 'The kernel restarted.' });
  await assert.rejects(r1, /kernel restarted/);
  await assert.rejects(r2, /kernel restarted/);
  assert.equal(tracker.size, 0);
});

test('parseKernelMessage accepts the protocol messages and reports the rest', () => {
  assert.equal(parseKernelMessage({ v: 1, type: 'superseded' }).ok, true);
  const ins = parseKernelMessage({ v: 1, type: 'insert_cell', source: 'x', cell_id: 'c1', run: true });
  assert.ok(ins.ok);
  assert.deepEqual(ins.ok && ins.message, {
    v: 1,
    type: 'insert_cell',
    source: 'x',
    cell_id: 'c1',
    run: true
  });
  const ev = parseKernelMessage({ v: 1, type: 'event', run: 'r1', event: { type: 'attempt', n: 1 } });
  assert.equal(ev.ok, true);
  const bad = parseKernelMessage({ v: 2, type: 'reply', id: 'x', ok: true });
  assert.equal(bad.ok, false);
  assert.equal(!bad.ok && bad.mismatch, true);
  assert.equal(parseKernelMessage('nope').ok, false);
  assert.equal(parseKernelMessage({ v: 1, type: 'event', run: 'r', event: { type: 'weird' } }).ok, false);
  assert.equal(
    parseKernelMessage({ v: 1, type: 'event', run: 'r', event: { type: 'memory', examples: 2 } }).ok,
    true
  );
  assert.equal(parseKernelMessage({ v: 1, type: 'reply', ok: true }).ok, false);
});

test('describeError explains protocol mismatch and busy, else message + hint', () => {
  assert.match(describeError({ kind: 'protocol_mismatch', message: 'x' }), /same sqlnb version/);
  assert.match(describeError({ kind: 'busy', message: 'x' }), /still being answered/);
  assert.equal(describeError({ kind: 'UsageError', message: 'Bad.', hint: 'Do X.' }), 'Bad. Do X.');
});

test("withHint makes sentences of the kernel's message and hint phrases", () => {
  assert.equal(
    withHint('no replies left (add replies)', "check the model's configuration and try again"),
    "No replies left (add replies). Check the model's configuration and try again."
  );
  assert.equal(withHint('Stopped.'), 'Stopped.');
  assert.equal(withHint('is it here?', ''), 'Is it here?');
  assert.equal(withHint('sqlnb is not installed', 'then restart'), 'sqlnb is not installed. Then restart.');
});

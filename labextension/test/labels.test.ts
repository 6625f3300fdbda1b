/**
 * The panel shows the kernel's words: the steps, the outcome and the confidence badge of
 * a run come with their labels (sqlnb.labels), the ones the terminal and the chat widget
 * show. tests/data/labels.json holds events as the kernel sends them (tests/test_labels.py
 * writes it and checks it against the kernel).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  confidenceAriaLabel,
  confidenceLabel,
  confidenceReasons,
  confidenceTooltip,
  parseConfidence
} from '../src/core/confidence';
import {
  applyEvent,
  deserializeChat,
  newTurn,
  serializeChat,
  stepLabel,
  Turn
} from '../src/core/conversation';
import { Confidence, DoneEvent, RunEvent } from '../src/core/protocol';

// compiled to lib-test/test/: the repository's tests/data is three folders up
const FIXTURE = join(__dirname, '..', '..', '..', 'tests', 'data', 'labels.json');
const EVENTS: RunEvent[] = JSON.parse(readFileSync(FIXTURE, 'utf8')).events;
const STEPS = EVENTS.filter(e => e.type !== 'done');
const DONE = EVENTS.filter((e): e is DoneEvent => e.type === 'done');

function reloaded(turn: Turn): Turn {
  return deserializeChat(serializeChat([turn], 10))[0];
}

function lastStep(turn: Turn): string {
  return stepLabel(turn.steps[turn.steps.length - 1]);
}

test('the fixture has every kind of step and outcome', () => {
  assert.deepEqual([...new Set(EVENTS.map(e => e.type))].sort(), [
    'attempt',
    'done',
    'explaining',
    'memory',
    'reply',
    'started'
  ]);
  assert.ok(DONE.some(e => e.confidence) && DONE.some(e => e.status === 'failed'));
});

test("each step shows the kernel's label as it is, also in a reloaded chat", () => {
  for (const event of STEPS) {
    const fields = event as { label?: string | null; text?: string | null };
    const expected = fields.label ?? fields.text;
    assert.ok(expected, event.type);
    const turn = applyEvent(newTurn('How many orders?', 'shop'), event, 10);
    assert.equal(lastStep(turn), expected);
    assert.equal(lastStep(reloaded(turn)), expected);
  }
});

test("a run that did not succeed says how it ended in the kernel's words", () => {
  for (const event of DONE.filter(e => e.status === 'failed' || e.status === 'stopped')) {
    const turn = applyEvent(newTurn('How many orders?', 'shop'), event, 10);
    assert.ok(event.label);
    assert.equal(turn.error?.message, event.label);
  }
});

function badge(c: Confidence): string[] {
  return [confidenceLabel(c), confidenceAriaLabel(c), confidenceTooltip(c), ...confidenceReasons(c)];
}

test("the confidence badge shows the kernel's words, also in a reloaded chat", () => {
  for (const event of DONE.filter(e => e.confidence)) {
    const words = event.confidence_labels!;
    const expected = [words.label, words.aria_label, words.tooltip, ...words.reasons];
    const turn = applyEvent(newTurn('How many orders?', 'shop'), event, 10);
    assert.deepEqual(badge(turn.confidence!), expected);
    assert.deepEqual(badge(reloaded(turn).confidence!), expected);
    // a confidence without the kernel's words (a chat saved by an older panel) reads the same
    assert.deepEqual(badge(parseConfidence(event.confidence)!), expected);
  }
});

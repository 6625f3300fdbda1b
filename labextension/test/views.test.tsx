/**
 * Parts of the panel drawn as HTML (react-dom/server): a follow-up's "Answered as" under
 * the question, from the done event; the live line of a running turn.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { LiveLineView } from '../src/components/live-line';
import { UserQuestion } from '../src/components/question';
import { applyEvent, deserializeChat, newTurn, serializeChat } from '../src/core/conversation';

const REWRITTEN = 'How many orders were placed in February 2024?';

test('a follow-up answered as another question shows it, muted, right under the question', () => {
  const turn = applyEvent(
    newTurn('And in February?', 'shop', true),
    { type: 'done', status: 'success', sql: 'SELECT 1', cell: '%%sql\nSELECT 1\n', answered_as: REWRITTEN },
    10
  );
  const html = renderToStaticMarkup(<UserQuestion turn={turn} />);
  assert.equal(
    html,
    '<div class="sqlnb-user-question sqlnb-follow-up" title="Asked about shop">And in February?</div>' +
      '<div class="sqlnb-answered-as sqlnb-muted" title="The follow-up question as sqlnb answered it, written to stand alone">' +
      `<i>Answered as:</i> ${REWRITTEN}</div>`
  );
  // a reloaded chat shows it too
  const [again] = deserializeChat(JSON.parse(JSON.stringify(serializeChat([turn], 10))));
  assert.equal(renderToStaticMarkup(<UserQuestion turn={again} />), html);
});

test('a question answered as it was asked shows no "Answered as"', () => {
  for (const answered_as of [null, undefined, '', '  ', 'How many orders?']) {
    const turn = applyEvent(
      newTurn('How many orders?', null),
      { type: 'done', status: 'success', sql: 'SELECT 1', cell: '%%sql\nSELECT 1\n', answered_as },
      10
    );
    assert.equal(
      renderToStaticMarkup(<UserQuestion turn={turn} />),
      '<div class="sqlnb-user-question">How many orders?</div>'
    );
  }
});

test('the live line: the phase, the seconds since the start, the model text as written', () => {
  const start = newTurn('How many orders?', 'shop');
  const t0 = start.startedAt!;
  assert.match(
    renderToStaticMarkup(<LiveLineView turn={start} now={t0 + 1500} />),
    /<span class="sqlnb-live-label">Waiting for the kernel…<\/span><span class="sqlnb-elapsed" data-since="\d+">1 s<\/span><\/div><\/div>$/
  );
  let turn = applyEvent(start, { type: 'phase', phase: 'writing', call: 1, label: 'Writing a query…' }, 10);
  turn = applyEvent(turn, { type: 'text', call: 1, offset: 0, text: 'The orders table has' }, 10);
  const html = renderToStaticMarkup(<LiveLineView turn={turn} now={t0 + 65_000} />);
  assert.match(html, /<span class="sqlnb-live-label">Writing a query…<\/span>/);
  assert.match(html, />1 min 5 s</);
  assert.match(html, /<pre class="sqlnb-live-text">The orders table has<\/pre>/);
});

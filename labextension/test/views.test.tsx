/**
 * Parts of the panel drawn as HTML (react-dom/server): the live line of a running turn.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { LiveLineView } from '../src/components/live-line';
import { applyEvent, newTurn } from '../src/core/conversation';

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

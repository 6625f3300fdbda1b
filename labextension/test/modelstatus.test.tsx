/**
 * The shared local model's line in the panel (GET /sqlnb/model): its reply read, the line
 * for each state, the follower that asks again every 2 s while the model loads, and the
 * component as it draws each state.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { ModelStatusLineView } from '../src/components/model-status';
import { modelStatusLine, NO_MODEL_SERVER, parseModelServerStatus } from '../src/core/modelstatus';
import { ModelServerStatus } from '../src/modelserver';

const MODEL = 'llamacpp:qwen2.5-coder-1.5b-instruct-q4_k_m';

/** What the server answers (sqlnb/server/process.py's status, or extension.py's). */
function reply(state: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    state,
    model: MODEL,
    seconds_loading: null,
    load_seconds: null,
    error: null,
    hint: null,
    ...fields
  };
}

const MISSING = reply('failed', {
  model: null,
  error:
    "the local model 'qwen2.5-coder-1.5b' is not downloaded yet (looked for /home/u/.cache/sqlnb/models/x.gguf)",
  hint: 'sqlnb model download qwen2.5-coder-1.5b'
});

test("the server's reply is read; anything else is no shared model", () => {
  const status = parseModelServerStatus(reply('loading', { seconds_loading: 12.4 }));
  assert.equal(status.state, 'loading');
  assert.equal(status.secondsLoading, 12.4);
  assert.equal(status.model, MODEL);
  for (const bad of [null, 'ready', [], { state: 'sleeping' }, { model: MODEL }]) {
    assert.deepEqual(parseModelServerStatus(bad), NO_MODEL_SERVER);
  }
});

test('the line: loading counts seconds, failed says what to do, off and none say nothing', () => {
  const now = 1_000_000;
  const loading = modelStatusLine(parseModelServerStatus(reply('loading', { seconds_loading: 3 })), {
    now,
    loadingSince: now - 12_300
  });
  assert.equal(loading?.text, 'Loading the local model… 12 s');
  assert.equal(loading?.kind, 'loading');
  // before the page's clock knows when it started: the server's count
  assert.equal(
    modelStatusLine(parseModelServerStatus(reply('loading', { seconds_loading: 3.7 })))?.text,
    'Loading the local model… 3 s'
  );

  const failed = modelStatusLine(parseModelServerStatus(MISSING));
  assert.equal(failed?.kind, 'failed');
  assert.match(
    failed?.text ?? '',
    /^The local model 'qwen2\.5-coder-1\.5b' is not downloaded yet \(looked for .*\)\.$/
  );
  assert.equal(failed?.hint, 'sqlnb model download qwen2.5-coder-1.5b');
  assert.equal(failed?.command, true);
  const crashed = modelStatusLine(
    parseModelServerStatus(
      reply('failed', { error: 'the model process exited while loading (code 1)', hint: 'restart Jupyter' })
    )
  );
  assert.equal(crashed?.text, 'The model process exited while loading (code 1).');
  assert.equal(crashed?.hint, 'Restart Jupyter.');
  assert.equal(crashed?.command, false);

  const ready = parseModelServerStatus(reply('ready', { load_seconds: 41.6 }));
  assert.equal(modelStatusLine(ready), null); // ready when the panel opened: nothing to say
  assert.equal(modelStatusLine(ready, { sawLoading: true })?.text, 'Local model ready (loaded in 42 s)');
  for (const state of ['off', 'none']) {
    assert.equal(modelStatusLine(parseModelServerStatus(reply(state))), null);
  }
  assert.equal(modelStatusLine(parseModelServerStatus(reply('stopped')))?.kind, 'stopped');
});

test('the component draws each state: the failed one as an alert with the command to run', () => {
  const html = (line: ReturnType<typeof modelStatusLine>) =>
    renderToStaticMarkup(<ModelStatusLineView line={line} />);
  assert.equal(html(null), '');
  const failed = html(modelStatusLine(parseModelServerStatus(MISSING)));
  assert.match(
    failed,
    /^<div class="sqlnb-model-status sqlnb-model-failed" data-state="failed" role="alert">/
  );
  assert.match(failed, /<code class="sqlnb-model-hint">sqlnb model download qwen2.5-coder-1.5b<\/code>/);
  const loading = html(
    modelStatusLine(parseModelServerStatus(reply('loading', { seconds_loading: 5 })), {
      now: 0,
      loadingSince: -5000
    })
  );
  assert.match(loading, /role="status"/);
  assert.match(loading, /title="The local model shared by this Jupyter server: llamacpp:qwen/);
  assert.match(loading, />Loading the local model… 5 s</);
});

/** A server whose replies are given in turn (the last one repeats); counts the requests. */
function server(...replies: (Record<string, unknown> | null | Error)[]) {
  let asked = 0;
  const request = async () => {
    const r = replies[Math.min(asked, replies.length - 1)];
    asked += 1;
    if (r instanceof Error) {
      throw r;
    }
    return r;
  };
  return { request, asked: () => asked };
}

async function waitUntil(check: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) {
      throw new Error('timed out');
    }
    await new Promise(r => setTimeout(r, 5));
  }
}

test('while the model loads the panel asks again; once ready it says so for a moment, then stops asking', async () => {
  const s = server(
    reply('loading', { seconds_loading: 1 }),
    reply('loading', { seconds_loading: 1.02 }),
    reply('ready', { load_seconds: 1.1 })
  );
  const status = new ModelServerStatus(s.request, { pollMs: 10, readyShownMs: 60 });
  const states: string[] = [];
  status.changed.connect((_, st) => states.push(st.state));
  await status.refresh();
  assert.equal(status.status.state, 'loading');
  assert.match(status.line()?.text ?? '', /^Loading the local model… 1 s$/);
  await waitUntil(() => status.status.state === 'ready');
  assert.equal(status.line()?.text, 'Local model ready (loaded in 1 s)');
  const asked = s.asked();
  assert.equal(asked, 3);
  // the moment passes: the line goes (a change is signalled), and nothing more is asked
  await waitUntil(() => status.line() === null);
  await new Promise(r => setTimeout(r, 40));
  assert.equal(s.asked(), asked);
  assert.deepEqual(states, ['loading', 'loading', 'ready', 'ready']);
  status.dispose();
});

test('a server without the route, or out of reach, shows nothing; a failed model is said at once', async () => {
  const none = new ModelServerStatus(server(null).request, { pollMs: 10 });
  await none.refresh();
  assert.equal(none.status.state, 'none');
  assert.equal(none.line(), null);

  const unreachable = new ModelServerStatus(server(new Error('offline')).request, { pollMs: 10 });
  await unreachable.refresh();
  assert.equal(unreachable.line(), null);

  const s = server(MISSING);
  const failed = new ModelServerStatus(s.request, { pollMs: 10 });
  await failed.refresh();
  assert.equal(failed.line()?.kind, 'failed');
  await new Promise(r => setTimeout(r, 40));
  assert.equal(s.asked(), 1); // not loading: not asked again until the panel opens again
  failed.dispose();
});

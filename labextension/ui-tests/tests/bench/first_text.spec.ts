/**
 * Benchmark (not part of the default run: benchmarks/first_text.py): with a real model, the
 * time from pressing Enter on a question in the panel to the first words of the model's
 * reply showing in it (`.sqlnb-live-text`), to the live line's first phase, and to the
 * answer. The first question also loads the model (cold); the others find it loaded, with
 * the prompt states of earlier questions kept (warm).
 *
 * SQLNB_BENCH_MODEL: the model spec (default the offline llamacpp:qwen2.5-coder-1.5b);
 * SQLNB_BENCH_DB: the demo's DuckDB file; SQLNB_BENCH_QUESTIONS: questions, one per line
 * (defaults below); SQLNB_BENCH_PAUSE: seconds from an answer to the next question (a person
 * reading it and typing; default 0); SQLNB_BENCH_RESTART=1: then Kernel › Restart, the
 * panel's Reconnect and the model's cell run again, and the second question asked once more
 * (the first question after a restart); SQLNB_BENCH_OUT: where the raw timings go (JSON).
 */
import * as fs from 'fs';
import {
  expect,
  finalStatus,
  openNotebook,
  openPanel,
  runCellInPlace,
  test as sqlnbTest,
  turn,
  waitForKernelIdle
} from '../sqlnb';

// a kernel restart needs the real kernels API (Galata's mock answers it with 201, which
// JupyterLab refuses)
const test = sqlnbTest.extend({
  // eslint-disable-next-line no-empty-pattern
  kernels: async ({}, use) => {
    await use(null as any);
  }
});

const MODEL = process.env.SQLNB_BENCH_MODEL || 'llamacpp:qwen2.5-coder-1.5b';
const PAUSE_S = Number(process.env.SQLNB_BENCH_PAUSE || '0');
const RESTART = process.env.SQLNB_BENCH_RESTART === '1';
const QUESTIONS = (
  process.env.SQLNB_BENCH_QUESTIONS ||
  [
    'How many customers do we have?',
    'How many products cost more than 100?',
    'Which country has the most customers?',
    'What is the total amount of all orders?',
    'How many orders have the status shipped?',
    'List the five most expensive products.'
  ].join('\n')
)
  .split('\n')
  .map(q => q.trim())
  .filter(Boolean);

test('first words of the reply in the panel', async ({ page, tmpPath }, testInfo) => {
  test.setTimeout(1800000);
  const db = process.env.SQLNB_BENCH_DB;
  // a real model on the demo database: benchmarks/first_text.py makes both and runs this
  test.skip(!db, 'run through benchmarks/first_text.py, which names the demo database');
  const nb = await openNotebook(page, tmpPath, 'first_text.ipynb', [
    '%load_ext sqlnb',
    `%sqlnb connect duckdb:///${db} --name sample`,
    `%config AskMagic.model = ${JSON.stringify(MODEL)}`
  ]);
  const panel = await openPanel(page);
  await expect(panel.locator('.sqlnb-connections')).toHaveValue('sample');

  // Page side: for the turn being answered, when its live line and its text first show.
  await page.evaluate(() => {
    const w = window as any;
    w.sqlnbFirst = {} as Record<string, { phase?: number; text?: number }>;
    const root = document.querySelector('#sqlnb-chat-panel') as HTMLElement;
    new MutationObserver(() => {
      const t = performance.now();
      root.querySelectorAll('.sqlnb-turn.sqlnb-running[data-turn]').forEach(node => {
        const id = (node as HTMLElement).dataset.turn as string;
        const rec = (w.sqlnbFirst[id] ??= {});
        if (rec.phase === undefined && node.querySelector('.sqlnb-live-label')) {
          const label = node.querySelector('.sqlnb-live-label')!.textContent ?? '';
          if (label !== 'Waiting for the kernel…' && label !== 'Working…') {
            rec.phase = t;
          }
        }
        if (rec.text === undefined && (node.querySelector('.sqlnb-live-text')?.textContent ?? '').trim()) {
          rec.text = t;
        }
      });
    }).observe(root, { childList: true, subtree: true, characterData: true });
  });

  const input = panel.locator('.sqlnb-question-input');
  const results: any[] = [];
  const asks: Array<[string, boolean]> = QUESTIONS.map((q, i) => [q, i > 0]);
  if (RESTART) {
    // asked again on the restarted kernel: the second question (one asked warm before)
    asks.push([QUESTIONS[Math.min(1, QUESTIONS.length - 1)], true]);
  }
  let restart_s: number | null = null;
  for (const [i, [q, warm]] of asks.entries()) {
    if (RESTART && i === QUESTIONS.length) {
      // Kernel › Restart (without its dialog), the panel's one-click Reconnect, and the
      // model's cell run again: then the first question on the new kernel
      const began = await page.evaluate(() => performance.now());
      await page.evaluate(async p => {
        await (window as any).sqlnbTest.panel(p).sessionContext.session.kernel.restart();
      }, nb);
      await waitForKernelIdle(page, nb, 120000);
      await panel.locator('.sqlnb-reconnect-one', { hasText: 'Reconnect sample' }).click();
      await expect(panel.locator('.sqlnb-connections')).toHaveValue('sample');
      await runCellInPlace(page, 2);
      restart_s = ((await page.evaluate(() => performance.now())) - began) / 1000;
    }
    await expect(input).toBeEnabled();
    if (PAUSE_S > 0) {
      // a person reads the answer (or the panel) and types the question: time that passes
      await page.waitForTimeout(PAUSE_S * 1000);
    }
    await input.fill(q);
    const asked = await page.evaluate(() => performance.now());
    await input.press('Enter');
    const t = turn(panel, q).last();
    const status = await finalStatus(t, 900000);
    const done = await page.evaluate(() => performance.now());
    const id = await t.getAttribute('data-turn');
    const first = await page.evaluate(turnId => (window as any).sqlnbFirst[turnId as string] ?? {}, id);
    results.push({
      question: q,
      warm,
      after_restart: i >= QUESTIONS.length,
      status,
      phase_s: first.phase !== undefined ? (first.phase - asked) / 1000 : null,
      first_text_s: first.text !== undefined ? (first.text - asked) / 1000 : null,
      answer_s: (done - asked) / 1000
    });
  }
  const browser = page.context().browser()?.version() ?? null;
  const out = process.env.SQLNB_BENCH_OUT || testInfo.outputPath('first_text.raw.json');
  fs.writeFileSync(
    out,
    JSON.stringify({ model: MODEL, browser, pause_s: PAUSE_S, restart_s, questions: results }, null, 1)
  );
  expect(results.filter(r => r.first_text_s !== null).length).toBe(results.length);
});

/**
 * Stop: a slow model call and a long statement are both cancelled; the turn ends
 * `stopped` within the documented 2 s (asserted with a margin), the Stop button hides,
 * and the next question works.
 */
import {
  appendCell,
  ask,
  cells,
  dbCopy,
  expect,
  finalStatus,
  openNotebook,
  openPanel,
  outputText,
  runCellInPlace,
  scriptedModel,
  setupCells,
  sqlReply,
  tableRows,
  test,
  turn
} from './sqlnb';

// The documented bound is 2 s from Stop to the end of the run; the margin covers the
// round trips through the server and a loaded machine.
const STOPPED_WITHIN = 6000;

// A cell listing the question threads still alive in the kernel, once they have had the
// same bound to end (it returns as soon as none is left).
const LIVE_RUNS = `
import threading as _th, time as _time
_deadline = _time.monotonic() + 6
def _sqlnb_live():
    return sorted(t.name for t in _th.enumerate() if t.name.startswith("sqlnb-ask") and t.is_alive())
while _sqlnb_live() and _time.monotonic() < _deadline:
    _time.sleep(0.05)
print("live:", _sqlnb_live())
`.trim();

/** Runs LIVE_RUNS in a new cell and returns what it printed. */
async function liveRuns(page: any, nb: string): Promise<string> {
  const index = await appendCell(page, nb, LIVE_RUNS);
  await runCellInPlace(page, index);
  return outputText((await cells(page, nb))[index]).trim();
}

test('Stop ends a slow model call and a long statement; the next question works', async ({
  page,
  tmpPath
}) => {
  const duck = dbCopy('duckdb', 'stop');
  const slow = scriptedModel('stop-slow', {
    replies: [sqlReply('SELECT 1 AS one'), 'FINAL'],
    delay: 120
  });
  // A statement that would run for hours: a trillion-row cross join.
  const long = scriptedModel('stop-long', [
    sqlReply('SELECT sum(a.range * b.range) AS s FROM range(1000000) a, range(1000000) b'),
    'FINAL'
  ]);
  const fast = scriptedModel('stop-fast', [sqlReply('SELECT count(*) AS n FROM customers'), 'FINAL']);
  const nb = await openNotebook(
    page,
    tmpPath,
    'stop.ipynb',
    setupCells({ connections: [{ kind: 'duckdb', file: duck, name: 'shop' }], model: slow })
  );
  const panel = await openPanel(page);
  const stop = panel.locator('.sqlnb-stop');
  await expect(stop).toBeHidden();

  // 1. The model is thinking (each call sleeps 120 s).
  const q1 = 'Anything slow?';
  await ask(panel, q1);
  const t1 = turn(panel, q1);
  await expect(stop).toBeVisible();
  await expect(t1).not.toHaveAttribute('data-status', /^(success|failed|needs_clarification|stopped|error)$/);
  await stop.click();
  await expect(t1).toHaveAttribute('data-status', 'stopped', { timeout: STOPPED_WITHIN });
  await expect(stop).toBeHidden();
  await expect(t1.locator('.sqlnb-step[data-kind="attempt"]')).toHaveCount(0);
  expect(await liveRuns(page, nb)).toBe('live: []'); // the question's thread ended

  // 2. The statement is running: the model's reply is in, its attempt never ends alone.
  const cfg = await appendCell(page, nb, `%config AskMagic.model = ${JSON.stringify(long)}`);
  await runCellInPlace(page, cfg);
  const q2 = 'A big sum?';
  await ask(panel, q2);
  const t2 = turn(panel, q2);
  await expect(t2.locator('.sqlnb-step[data-kind="reply"]').first()).toBeVisible();
  await expect(stop).toBeVisible();
  await stop.click();
  await expect(t2).toHaveAttribute('data-status', 'stopped', { timeout: STOPPED_WITHIN });
  await expect(stop).toBeHidden();
  await expect(t2.locator('.sqlnb-step[data-kind="attempt"][data-ok="true"]')).toHaveCount(0);
  // The statement was cancelled, not left running: the question's thread ended.
  expect(await liveRuns(page, nb)).toBe('live: []');

  // 3. The kernel is free again: a new question gets its answer.
  const cfg2 = await appendCell(page, nb, `%config AskMagic.model = ${JSON.stringify(fast)}`);
  await runCellInPlace(page, cfg2);
  const q3 = 'How many customers?';
  await ask(panel, q3);
  const t3 = turn(panel, q3);
  expect(await finalStatus(t3)).toBe('success');
  expect(await tableRows(t3.locator('table.sqlnb-result'))).toEqual([['4']]);
  await expect(stop).toBeHidden();
  await expect(panel.locator('.sqlnb-turn')).toHaveCount(3);
});

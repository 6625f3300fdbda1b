/**
 * Live: while a question is answered the panel shows what the run does now, the seconds
 * since it started, and the model's text as it is written; the line goes once the answer
 * is there (the steps stay one click away).
 */
import {
  ask,
  dbCopy,
  expect,
  finalStatus,
  openNotebook,
  openPanel,
  scriptedModel,
  screenshot,
  setupCells,
  test,
  turn
} from './sqlnb';

test('the model writes into the panel before the answer arrives', async ({ page, tmpPath }, testInfo) => {
  const duck = dbCopy('duckdb', 'live');
  const reply =
    'The customers table has one row per customer, so counting its rows answers this.\n\n' +
    '```sql\nSELECT count(*) AS customers FROM customers\n```';
  // each word of the reply 0.15 s apart: about 3 s of writing to watch
  const model = scriptedModel('live', { replies: [reply, 'FINAL'], stream_pause: 0.15 });
  await openNotebook(
    page,
    tmpPath,
    'live.ipynb',
    setupCells({ connections: [{ kind: 'duckdb', file: duck, name: 'shop' }], model })
  );
  const panel = await openPanel(page);
  const question = 'How many customers are there?';
  await ask(panel, question);
  const t = turn(panel, question);
  const live = t.locator('.sqlnb-live');
  // the phase, then the first words, while the run is still going
  await expect(live.locator('.sqlnb-live-label')).toHaveText('Writing a query…');
  const text = live.locator('.sqlnb-live-text');
  await expect(text).toContainText('The customers table');
  await expect(t).not.toHaveAttribute('data-status', /.+/);
  const early = (await text.textContent()) ?? '';
  expect(early).not.toContain('SELECT count(*)');
  await page.sidebar.setWidth(320, 'right');
  await screenshot(page, 'live.png', n => testInfo.outputPath(n));
  // more of it follows, and the clock counts
  await expect(text).toContainText('SELECT count(*) AS customers');
  await expect(live.locator('.sqlnb-elapsed')).toHaveText(/^\d+ s$/);

  expect(await finalStatus(t)).toBe('success');
  await expect(t.locator('.sqlnb-live')).toHaveCount(0);
  await expect(t.locator('.sqlnb-sql').first()).toContainText(/count\(\*\)/i);
  // the steps are still there, folded
  await expect(t.locator('details.sqlnb-steps-box')).toHaveCount(1);
});

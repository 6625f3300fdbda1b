/**
 * The chat is saved in the notebook's metadata (sqlnb.chat.turns): a page reload shows
 * it again.
 */
import {
  ask,
  dbCopy,
  expect,
  finalStatus,
  notebookMetadata,
  openNotebook,
  openPanel,
  savedNotebook,
  scriptedModel,
  setupCells,
  sqlReply,
  test,
  turn,
  waitForKernelIdle
} from './sqlnb';

test('a reload keeps the chat history, saved in the notebook metadata', async ({
  page,
  request,
  tmpPath
}) => {
  const duck = dbCopy('duckdb', 'reload');
  const model = scriptedModel('reload', [
    sqlReply('SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY country'),
    'FINAL'
  ]);
  const nb = await openNotebook(
    page,
    tmpPath,
    'reload.ipynb',
    setupCells({ connections: [{ kind: 'duckdb', file: duck, name: 'shop' }], model })
  );
  let panel = await openPanel(page);
  const q = 'Customers per country?';
  await ask(panel, q);
  expect(await finalStatus(turn(panel, q))).toBe('success');

  // The turn is in the notebook's metadata, and saved with it.
  await expect
    .poll(async () => JSON.stringify((await notebookMetadata(page, nb))?.sqlnb?.chat?.turns ?? []))
    .toContain(q);
  expect(await page.notebook.save()).toBe(true);
  const saved = await savedNotebook(request, nb);
  const turns = saved.metadata?.sqlnb?.chat?.turns;
  expect(Array.isArray(turns)).toBe(true);
  expect(turns).toHaveLength(1);
  expect(JSON.stringify(turns[0])).toContain(q);
  expect(JSON.stringify(turns[0])).toContain('GROUP BY country');

  await page.reload({ waitForIsReady: false });
  await page.waitForFunction(p => !!(window as any).sqlnbTest?.panel(p), nb, { timeout: 60000 });
  await waitForKernelIdle(page, nb);
  panel = await openPanel(page);
  const t = turn(panel, q);
  await expect(t).toHaveCount(1);
  await expect(t).toHaveAttribute('data-status', 'success');
  await expect(t.locator('.sqlnb-sql')).toContainText(/GROUP BY\s+country/);
  await expect(panel.locator('.sqlnb-turn')).toHaveCount(1);
  expect(JSON.stringify((await notebookMetadata(page, nb))?.sqlnb?.chat?.turns)).toContain(q);
});

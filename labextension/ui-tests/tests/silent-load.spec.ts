/**
 * A kernel where sqlnb was never loaded: opening the panel loads it silently (no cell
 * added, no execution count taken), with an empty chat; then a connection made in a cell
 * shows in the panel and a question gets its answer.
 */
import {
  appendCell,
  ask,
  cells,
  dbCopy,
  dbUrl,
  expect,
  finalStatus,
  openNotebook,
  openPanel,
  outputText,
  runCellInPlace,
  scriptedModel,
  sqlReply,
  tableRows,
  test,
  turn
} from './sqlnb';

test('the panel loads sqlnb into a kernel silently', async ({ page, tmpPath }) => {
  const nb = await openNotebook(page, tmpPath, 'plain.ipynb', ['x = 6 * 7'], { run: false });
  const panel = await openPanel(page);
  await expect(panel.locator('.sqlnb-banner')).toBeVisible();
  await expect(panel.locator('.sqlnb-banner')).not.toHaveClass(/sqlnb-banner-error/);
  await expect(panel.locator('.sqlnb-turn')).toHaveCount(0);
  await expect(panel.locator('.sqlnb-connections option[value]:not([value=""])')).toHaveCount(0);

  // The magics exist now, though no cell ran %load_ext; the first cell run is [1].
  const list = await appendCell(page, nb, '%sqlnb list');
  await runCellInPlace(page, list);
  let now = await cells(page, nb);
  expect(now).toHaveLength(2);
  expect(now[list].execution_count).toBe(1);
  expect(now[list].outputs.filter(o => o.output_type === 'error')).toEqual([]);
  expect(outputText(now[list])).toContain('No connections');
  expect(now[0].execution_count).toBeNull();

  // The notebook's own %load_ext afterwards is quiet (no "already loaded") and keeps sqlnb.
  const load = await appendCell(page, nb, '%load_ext sqlnb');
  await runCellInPlace(page, load);
  now = await cells(page, nb);
  expect(now[load].outputs).toEqual([]);

  // A connection made in a cell shows in the panel; a question gets its answer.
  const model = scriptedModel('silent', [sqlReply('SELECT count(*) AS n FROM products'), 'FINAL']);
  const connect = await appendCell(
    page,
    nb,
    `%sqlnb connect ${dbUrl('sqlite', dbCopy('sqlite', 'silent'))} --name shop\n` +
      `%config AskMagic.model = ${JSON.stringify(model)}`
  );
  await runCellInPlace(page, connect);
  now = await cells(page, nb);
  expect(now[connect].outputs.filter(o => o.output_type === 'error')).toEqual([]);
  await expect(panel.locator('.sqlnb-connections')).toHaveValue('shop');
  await ask(panel, 'How many products?');
  const t = turn(panel, 'How many products?');
  expect(await finalStatus(t)).toBe('success');
  expect(await tableRows(t.locator('table.sqlnb-result'))).toEqual([['3']]);
});

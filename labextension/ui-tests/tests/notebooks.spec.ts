/**
 * Two notebooks, two kernels: each keeps its own chat in the panel, and an answer is
 * inserted into the notebook where its question was asked, even when the other notebook
 * was active while it ran.
 */
import {
  ask,
  cells,
  dbCopy,
  expect,
  finalStatus,
  openNotebook,
  openPanel,
  scriptedModel,
  setActiveCell,
  setupCells,
  sqlReply,
  tableRows,
  test,
  turn
} from './sqlnb';

test('each notebook keeps its chat; Insert goes to the asking notebook', async ({ page, tmpPath }) => {
  // A answers slowly (each model call sleeps 3 s), so the person can switch meanwhile.
  const modelA = scriptedModel('nb-a', {
    replies: [sqlReply('SELECT count(*) AS n_products FROM products'), 'FINAL'],
    delay: 3
  });
  const modelB = scriptedModel('nb-b', [sqlReply('SELECT count(*) AS n_customers FROM customers'), 'FINAL']);
  const a = await openNotebook(
    page,
    tmpPath,
    'a.ipynb',
    setupCells({
      connections: [{ kind: 'duckdb', file: dbCopy('duckdb', 'nb-a'), name: 'shop_a' }],
      model: modelA
    })
  );
  const b = await openNotebook(
    page,
    tmpPath,
    'b.ipynb',
    setupCells({
      connections: [{ kind: 'duckdb', file: dbCopy('duckdb', 'nb-b'), name: 'shop_b' }],
      model: modelB
    })
  );
  const panel = await openPanel(page);
  const select = panel.locator('.sqlnb-connections');

  // b.ipynb is active: the panel talks to its kernel.
  await expect(select).toHaveValue('shop_b');
  await expect(page.locator('.sqlnb-statusbar')).toHaveText('sqlnb: shop_b');
  const qB = 'How many customers?';
  await ask(panel, qB);
  expect(await finalStatus(turn(panel, qB))).toBe('success');

  // Switch to a.ipynb: its chat is empty, its connection shows.
  await page.notebook.activate('a.ipynb');
  await expect(select).toHaveValue('shop_a');
  await expect(page.locator('.sqlnb-statusbar')).toHaveText('sqlnb: shop_a');
  await expect(panel.locator('.sqlnb-turn')).toHaveCount(0);

  // Ask in A, then switch to B while A's answer is still coming.
  const qA = 'How many products?';
  await ask(panel, qA);
  await expect(turn(panel, qA)).toHaveCount(1);
  await expect(panel.locator('.sqlnb-stop')).toBeVisible();
  await page.notebook.activate('b.ipynb');
  await expect(select).toHaveValue('shop_b');
  await expect(panel.locator('.sqlnb-turn')).toHaveCount(1);
  await expect(turn(panel, qB)).toHaveCount(1);
  await expect(turn(panel, qA)).toHaveCount(0);

  // Back in A: the answer arrived into A's chat, not B's.
  await page.notebook.activate('a.ipynb');
  const tA = turn(panel, qA);
  expect(await finalStatus(tA)).toBe('success');
  expect(await tableRows(tA.locator('table.sqlnb-result'))).toEqual([['3']]);
  await expect(turn(panel, qB)).toHaveCount(0);

  // Insert A's answer: it lands in A, B is untouched.
  const cellsA = (await cells(page, a)).length;
  const cellsB = (await cells(page, b)).length;
  await setActiveCell(page, a, 0);
  await tA.locator('.sqlnb-insert').click();
  await expect.poll(async () => (await cells(page, a)).length).toBe(cellsA + 1);
  const inA = await cells(page, a);
  expect(inA[cellsA].source).toMatch(/^%%sql --conn shop_a\n-- sqlnb ask: How many products\?/);
  expect((await cells(page, b)).length).toBe(cellsB);

  // B's answer, inserted while B is active, lands in B only.
  await page.notebook.activate('b.ipynb');
  await expect(select).toHaveValue('shop_b');
  await turn(panel, qB).locator('.sqlnb-insert').click();
  await expect.poll(async () => (await cells(page, b)).length).toBe(cellsB + 1);
  expect((await cells(page, a)).length).toBe(cellsA + 1);
  expect((await cells(page, b)).some(c => c.source.startsWith('%%sql --conn shop_b\n'))).toBe(true);
});

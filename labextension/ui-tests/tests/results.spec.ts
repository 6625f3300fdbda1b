/**
 * Results that read well: the answer's SQL laid out in its dialect, long fractions rounded
 * (the full value on hover), every row within reach, and a chart drawn by JupyterLab's own
 * Vega-Lite renderer when the result suits one, with "Insert chart" writing the cell.
 */
import {
  ask,
  cells,
  dbCopy,
  expect,
  finalStatus,
  openNotebook,
  openPanel,
  runCellInPlace,
  scriptedModel,
  screenshot,
  setupCells,
  sqlReply,
  tableRows,
  test,
  turn
} from './sqlnb';

test('an answer reads well, reaches every row and draws its chart', async ({ page, tmpPath }, testInfo) => {
  const duck = dbCopy('duckdb', 'results');
  const model = scriptedModel('results', [
    sqlReply(
      "select 'group ' || (range % 4) as category, sum(range * 1.2345678) as total from range(40) group by 1 order by 1"
    ),
    'FINAL',
    sqlReply('select range as n from range(37)'),
    'FINAL'
  ]);
  const nb = await openNotebook(
    page,
    tmpPath,
    'results.ipynb',
    setupCells({ connections: [{ kind: 'duckdb', file: duck, name: 'shop' }], model })
  );
  const panel = await openPanel(page);
  await page.sidebar.setWidth(420, 'right');

  // 1. A category and a measure: laid out SQL, rounded totals, a bar chart.
  const q1 = 'Totals per group?';
  await ask(panel, q1);
  const t1 = turn(panel, q1);
  expect(await finalStatus(t1)).toBe('success');
  const sql = t1.locator('.sqlnb-answer .sqlnb-sql');
  await expect(sql).toContainText(/^SELECT\n/);
  await expect(sql).toContainText(/\n {2}SUM\(range \* 1.2345678\) AS total\nFROM /i);
  const rows = await tableRows(t1.locator('table.sqlnb-result'));
  expect(rows[0][0]).toBe('group 0');
  expect(rows[0][1]).toMatch(/^\d+\.\d{1,2}$/); // rounded for the eye
  const rounded = t1.locator('td.sqlnb-rounded').first();
  await expect(rounded).toHaveAttribute('title', /^\d+\.\d{3,}$/); // the full value on hover
  const chart = t1.locator('.sqlnb-chart .sqlnb-chart-view');
  await expect(chart.locator('canvas, svg').first()).toBeVisible();
  await chart.scrollIntoViewIfNeeded();
  await screenshot(page, 'chart.png', n => testInfo.outputPath(n));

  // "Insert chart": a cell that keeps the result and draws it, at the end of the notebook.
  const before = (await cells(page, nb)).length;
  await t1.locator('.sqlnb-insert-chart').click();
  await expect.poll(async () => (await cells(page, nb)).length).toBe(before + 1);
  const chartCell = (await cells(page, nb))[before];
  expect(chartCell.source).toMatch(/^%%sql --conn shop -o df --chart\n/);
  await runCellInPlace(page, before);
  const out = (await cells(page, nb))[before].outputs;
  expect(JSON.stringify(out)).toContain('application/vnd.vegalite.v5+json');

  // 2. A long result: 10 rows shown, the rest one click away.
  const q2 = 'All the numbers?';
  await ask(panel, q2);
  const t2 = turn(panel, q2);
  expect(await finalStatus(t2)).toBe('success');
  await expect(t2.locator('.sqlnb-row-count')).toContainText('10 of 37 rows');
  await expect(t2.locator('.sqlnb-chart')).toHaveCount(0); // numbers alone: no chart
  await t2.locator('.sqlnb-more-rows').click();
  await expect(t2.locator('.sqlnb-row-count')).toContainText('37 rows');
  const all = await tableRows(t2.locator('table.sqlnb-result'));
  expect(all.map(r => r[0])).toEqual(Array.from({ length: 37 }, (_, i) => String(i)));
});

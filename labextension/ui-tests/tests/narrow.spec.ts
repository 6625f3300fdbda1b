/**
 * At JupyterLab's default sidebar width the answer comes first: the tables fold away once a
 * conversation starts, and the question box, the answer's rating and its buttons stay in view.
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
  sqlReply,
  test,
  turn
} from './sqlnb';

test('the panel reads well at 250 px', async ({ page, tmpPath }, testInfo) => {
  const duck = dbCopy('duckdb', 'narrow');
  const model = scriptedModel('narrow', [
    sqlReply('SELECT country, count(*) AS customers FROM customers GROUP BY country ORDER BY customers DESC'),
    'FINAL'
  ]);
  await openNotebook(
    page,
    tmpPath,
    'narrow.ipynb',
    setupCells({ connections: [{ kind: 'duckdb', file: duck, name: 'sample' }], model })
  );
  const panel = await openPanel(page);
  await page.sidebar.setWidth(250, 'right');
  const tables = panel.locator('details.sqlnb-schema-box');
  await expect(tables).toHaveAttribute('open', ''); // before the first question: the tables
  // the connection's name and engine come first in its list
  await expect(panel.locator('.sqlnb-connections option[value="sample"]')).toHaveText(/^sample · DuckDB/);
  // and the list is wide enough to show them: the label gives it its room
  await expect(panel.locator('.sqlnb-connection-row .sqlnb-label')).toBeHidden();
  const shown = await panel.locator('.sqlnb-connections').evaluate(el => el.getBoundingClientRect().width);
  expect(shown).toBeGreaterThan(150);

  const q = 'Customers per country?';
  await ask(panel, q);
  const t = turn(panel, q);
  expect(await finalStatus(t)).toBe('success');
  await expect(tables).not.toHaveAttribute('open', ''); // folded: the answer comes first
  await expect(panel.locator('.sqlnb-question-input')).toBeInViewport();
  await expect(t.locator('.sqlnb-confidence-badge')).toBeInViewport();
  await expect(t.locator('.sqlnb-insert')).toBeInViewport();
  // nothing wider than the panel
  const overflow = await panel.evaluate(node => node.scrollWidth - node.clientWidth);
  expect(overflow).toBeLessThanOrEqual(1);
  await screenshot(page, 'narrow.png', n => testInfo.outputPath(n));
});

/**
 * A clarification round in the panel: the model asks a question back, the person
 * answers inline in the turn, and the final answer arrives.
 */
import {
  ask,
  dbInto,
  expect,
  finalStatus,
  openNotebook,
  openPanel,
  modelInto,
  screenshot,
  serverDir,
  setupCells,
  sqlReply,
  tableRows,
  test
} from './sqlnb';

test.use({ viewport: { width: 1400, height: 850 } });

test('the model asks back; the inline answer gets the final answer', async ({ page, tmpPath }, testInfo) => {
  const dir = await serverDir(page, tmpPath);
  const duck = dbInto(dir, 'duckdb', 'shop.duckdb');
  const model = modelInto(dir, 'replies.json', [
    'CLARIFY: Which month of 2024?',
    sqlReply(
      "SELECT count(*) AS n_orders FROM orders WHERE ordered_at >= DATE '2024-02-01' " +
        "AND ordered_at < DATE '2024-03-01'"
    ),
    'FINAL'
  ]);
  await openNotebook(
    page,
    tmpPath,
    'clarify.ipynb',
    setupCells({ connections: [{ kind: 'duckdb', file: duck, name: 'shop' }], model })
  );
  const panel = await openPanel(page);

  await ask(panel, 'How many orders were placed that month?');
  const first = panel.locator('.sqlnb-turn').first();
  expect(await finalStatus(first)).toBe('needs_clarification');
  const clarify = first.locator('.sqlnb-clarify');
  await expect(clarify.locator('.sqlnb-clarify-question')).toHaveText(/Which month of 2024\?/);
  await expect(first.locator('table.sqlnb-result')).toHaveCount(0);
  await clarify.locator('.sqlnb-clarify-input').fill('February');
  await page.sidebar.setWidth(460, 'right');
  await screenshot(page, 'clarify.png', n => testInfo.outputPath(n));
  await clarify.locator('.sqlnb-clarify-send').click();

  // The answer continues the conversation: the next turn ends with the result.
  const last = panel.locator('.sqlnb-turn').last();
  await expect(panel.locator('.sqlnb-turn')).toHaveCount(2);
  await expect(last.locator('.sqlnb-user-question')).toContainText('February');
  expect(await finalStatus(last)).toBe('success');
  await expect(last.locator('.sqlnb-sql')).toContainText("DATE '2024-02-01'");
  expect(await tableRows(last.locator('table.sqlnb-result'))).toEqual([['2']]);
  // The clarification is answered: no input left open on the first turn.
  await expect(first.locator('.sqlnb-clarify-input')).toHaveCount(0);
});

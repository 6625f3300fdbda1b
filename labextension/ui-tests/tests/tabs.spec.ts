/**
 * Two browser tabs on one notebook (one kernel): the kernel serves one panel at a time.
 * The newer tab's panel takes over; the older one says so (an error banner with Use here)
 * and takes the kernel back when asked.
 */
import type { Page } from '@playwright/test';
import {
  ask,
  dbCopy,
  expect,
  finalStatus,
  openNotebook,
  openPanel,
  scriptedModel,
  setupCells,
  sqlReply,
  test,
  turn
} from './sqlnb';

/** Opens the sqlnb sidebar of a plain JupyterLab page (no Galata helpers there). */
async function openPanelIn(page: Page) {
  await page.locator('.lm-TabBar-tab[data-id="sqlnb-chat-panel"]').click();
  const panel = page.locator('#sqlnb-chat-panel.sqlnb-panel');
  await expect(panel).toBeVisible();
  return panel;
}

test('a second tab takes the kernel over; Use here takes it back', async ({ context, page, tmpPath }) => {
  const model = scriptedModel('tabs', [
    sqlReply('SELECT count(*) AS n FROM customers'),
    'FINAL',
    sqlReply('SELECT count(*) AS n FROM products'),
    'FINAL'
  ]);
  const nb = await openNotebook(
    page,
    tmpPath,
    'tabs.ipynb',
    setupCells({ connections: [{ kind: 'duckdb', file: dbCopy('duckdb', 'tabs'), name: 'shop' }], model })
  );
  const first = await openPanel(page);
  await expect(first.locator('.sqlnb-connections')).toHaveValue('shop');
  await expect(first.locator('.sqlnb-banner')).not.toHaveClass(/sqlnb-banner-error/);

  // The same notebook in a second tab: same session, same kernel.
  const tab2 = await context.newPage();
  await tab2.goto(`/lab/tree/${nb}`);
  await expect(tab2.locator('.jp-NotebookPanel .jp-Cell')).toHaveCount(3);
  const second = await openPanelIn(tab2);
  await expect(second.locator('.sqlnb-connections')).toHaveValue('shop');

  // The first tab is told another panel has the kernel, and offers to take it back.
  await expect(first.locator('.sqlnb-banner')).toHaveClass(/sqlnb-banner-error/);
  await expect(first.locator('.sqlnb-reconnect')).toHaveText('Use here');
  await expect(second.locator('.sqlnb-banner')).not.toHaveClass(/sqlnb-banner-error/);

  await ask(second, 'How many customers?');
  expect(await finalStatus(turn(second, 'How many customers?'))).toBe('success');

  // Use here: the first tab works again, and the second is the one told.
  await first.locator('.sqlnb-reconnect').click();
  await expect(first.locator('.sqlnb-banner')).not.toHaveClass(/sqlnb-banner-error/);
  await expect(first.locator('.sqlnb-connections')).toHaveValue('shop');
  await expect(second.locator('.sqlnb-banner')).toHaveClass(/sqlnb-banner-error/);
  await ask(first, 'How many products?');
  const t = turn(first, 'How many products?');
  expect(await finalStatus(t)).toBe('success');
  await expect(t.locator('table.sqlnb-result td')).toHaveText(['3']);
  await tab2.close();
});

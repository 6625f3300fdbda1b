/**
 * The panel's connection indicator says what the active connection's credentials may
 * write: a short text that fits the default sidebar width, the full sentence as its
 * tooltip — for a writable DuckDB file and for one opened read-only.
 */
import { dbCopy, dbUrl, expect, openNotebook, openPanel, screenshot, test } from './sqlnb';

test.use({ viewport: { width: 1400, height: 850 } });

test('the connection indicator shows write access', async ({ page, tmpPath }) => {
  const writable = dbCopy('duckdb', 'writable');
  const readonly = dbCopy('duckdb', 'readonly');
  await openNotebook(page, tmpPath, 'write-access.ipynb', [
    '%load_ext sqlnb',
    `%sqlnb connect ${dbUrl('duckdb', readonly)} --name shop_ro --readonly`,
    `%sqlnb connect ${dbUrl('duckdb', writable)} --name shop`
  ]);
  const panel = await openPanel(page);
  const select = panel.locator('.sqlnb-connections');
  const indicator = panel.locator('.sqlnb-write-access');

  // the active connection (the last connected): a writable file with the shop's 3 tables
  await expect(select).toHaveValue('shop');
  await expect(indicator).toHaveText('can write 3 tables');
  await expect(indicator).toHaveAttribute('data-state', 'writable');
  await expect(indicator).toHaveAttribute(
    'title',
    /^this connection can write .*\.duckdb \(3 tables\), and ATTACH and COPY \.\.\. TO can write other files — the agent stays read-only; a --readonly connection is safer$/
  );
  // the short text fits the sidebar at its default width: nothing cut off
  const fits = await indicator.evaluate(node => node.scrollWidth <= node.clientWidth);
  expect(fits).toBe(true);
  const box = await panel.boundingBox();
  expect(box && box.width).toBeLessThanOrEqual(300);
  await screenshot(page, 'write-access-writable.png', n => test.info().outputPath(n));

  // switching to the read-only connection: 'read-only'
  await select.selectOption('shop_ro');
  await expect(indicator).toHaveText('read-only connection');
  await expect(indicator).toHaveAttribute('data-state', 'read-only');
  await expect(indicator).toHaveAttribute('title', /^read-only connection: .*\.duckdb is opened read-only/);
  await screenshot(page, 'write-access-readonly.png', n => test.info().outputPath(n));
});

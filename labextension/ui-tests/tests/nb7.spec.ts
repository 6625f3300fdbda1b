/**
 * The panel in Jupyter Notebook 7 (the notebook page at /notebooks/<path>): opened from the
 * View menu, it answers a question and inserts the %%sql cell into that notebook.
 */
import type { Page } from '@playwright/test';
import {
  dbCopy,
  expect,
  flat,
  notebookJSON,
  scriptedModel,
  setupCells,
  sqlReply,
  tableRows,
  test
} from './sqlnb';

/** The notebook's code cells' sources, as Notebook 7 shows them. */
async function sources(page: Page): Promise<string[]> {
  return page.locator('.jp-Notebook .jp-Cell .jp-InputArea-editor .cm-content').evaluateAll(nodes =>
    nodes.map(n =>
      Array.from(n.querySelectorAll('.cm-line'))
        .map(l => l.textContent ?? '')
        .join('\n')
    )
  );
}

test('the panel works in Notebook 7', async ({ context, page, tmpPath }) => {
  const duck = dbCopy('duckdb', 'nb7');
  const model = scriptedModel('nb7', [sqlReply('SELECT count(*) AS n_customers FROM customers'), 'FINAL']);
  const nbPath = `${tmpPath}/seven.ipynb`;
  const setup = setupCells({ connections: [{ kind: 'duckdb', file: duck, name: 'shop' }], model });
  expect(await page.contents.uploadContent(notebookJSON(setup), 'text', nbPath)).toBe(true);

  const nb7 = await context.newPage();
  await nb7.goto(`/notebooks/${nbPath}`);
  await expect(nb7.locator('.jp-Notebook .jp-Cell')).toHaveCount(setup.length);
  // Wait until the notebook's kernel is connected and idle.
  await nb7.waitForFunction(
    () => {
      const kernel = (window as any).jupyterapp?.shell?.currentWidget?.sessionContext?.session?.kernel;
      return !!kernel && kernel.status === 'idle' && kernel.connectionStatus === 'connected';
    },
    undefined,
    { timeout: 60000 }
  );
  // Run every cell (Run > Run All Cells) and wait for their execution counts.
  await nb7.locator('.lm-MenuBar-itemLabel', { hasText: 'Run' }).click();
  await nb7.locator('.lm-Menu-itemLabel', { hasText: /^Run All Cells$/ }).click();
  await expect(nb7.locator('.jp-Notebook .jp-Cell .jp-InputPrompt').last()).toHaveText(/\[\d+\]/, {
    timeout: 60000
  });
  await expect(
    nb7.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
  ).toHaveCount(0);

  // Open the panel from the View menu (the right sidebar starts closed in Notebook 7).
  await nb7.locator('.lm-MenuBar-itemLabel', { hasText: /^View$/ }).click();
  await nb7.locator('.lm-Menu-itemLabel', { hasText: /^Ask sqlnb$/ }).click();
  const panel = nb7.locator('#sqlnb-chat-panel.sqlnb-panel');
  await expect(panel).toBeVisible();

  await expect(panel.locator('.sqlnb-connections')).toHaveValue('shop');
  await expect(panel.locator('.sqlnb-schema-table[data-name="customers"]')).toBeVisible();
  const input = panel.locator('.sqlnb-question-input');
  await input.fill('How many customers?');
  await input.press('Enter');
  const t = panel.locator('.sqlnb-turn').last();
  await expect(t).toHaveAttribute('data-status', 'success', { timeout: 60000 });
  expect(await tableRows(t.locator('table.sqlnb-result'))).toEqual([['4']]);

  // Insert puts the %%sql cell into this notebook.
  await t.locator('.sqlnb-insert').click();
  await expect(nb7.locator('.jp-Notebook .jp-Cell')).toHaveCount(setup.length + 1);
  const now = await sources(nb7);
  expect(now.filter(s => s.startsWith('%%sql --conn shop'))).toHaveLength(1);
  expect(flat(now.join('\n'))).toContain(flat('SELECT count(*) AS n_customers FROM customers'));
  await nb7.close();
});

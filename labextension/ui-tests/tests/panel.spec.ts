/**
 * The sqlnb sidebar on a notebook whose kernel has connections: the connection list, the
 * schema browser, a question answered with streamed attempts, and the answer inserted
 * and run as a %%sql cell — on DuckDB, then on SQLite after switching connection.
 */
import {
  activeCellIndex,
  ask,
  cells,
  dbCopy,
  dbInto,
  expect,
  finalStatus,
  openNotebook,
  openPanel,
  outputText,
  modelInto,
  screenshot,
  serverDir,
  setActiveCell,
  setupCells,
  sqlReply,
  tableRows,
  test,
  turn
} from './sqlnb';

test.use({ viewport: { width: 1400, height: 850 } });

test('lists the connections and browses the schema', async ({ page, tmpPath }) => {
  const duck = dbCopy('duckdb', 'schema');
  const lite = dbCopy('sqlite', 'schema');
  await openNotebook(
    page,
    tmpPath,
    'schema.ipynb',
    setupCells({
      connections: [
        { kind: 'sqlite', file: lite, name: 'shop_lite' },
        { kind: 'duckdb', file: duck, name: 'shop' }
      ]
    })
  );
  const panel = await openPanel(page);

  const select = panel.locator('.sqlnb-connections');
  await expect(select.locator('option[value="shop"]')).toHaveCount(1);
  await expect(select.locator('option[value="shop_lite"]')).toHaveCount(1);
  await expect(select).toHaveValue('shop'); // the kernel's active connection
  await expect(page.locator('.sqlnb-statusbar')).toHaveText('sqlnb: shop');

  const schema = panel.locator('.sqlnb-schema');
  for (const table of ['customers', 'orders', 'products']) {
    await expect(schema.locator(`.sqlnb-schema-table[data-name="${table}"]`)).toBeVisible();
  }
  const orders = schema.locator('.sqlnb-schema-table[data-name="orders"]');
  const column = (name: string) => orders.locator(`.sqlnb-schema-column[data-name="${name}"]`);
  await expect(column('customer_id')).toBeHidden();

  // A click on the table (not on its name) shows its columns, with keys.
  await orders.click({ position: { x: 4, y: 8 } });
  await expect(column('customer_id')).toBeVisible();
  await expect(orders.locator('.sqlnb-schema-column')).toHaveCount(5);
  await expect(column('id')).toContainText(/PK/);
  await expect(column('customer_id')).toContainText('customers.id');
  await expect(column('product_id')).toContainText('products.id');
  await expect(column('quantity')).not.toContainText(/PK|FK|\./);

  // Shift+Enter makes a new line in the question box; it sends nothing.
  const input = panel.locator('.sqlnb-question-input');
  await input.fill('');
  await input.pressSequentially('first line');
  await input.press('Shift+Enter');
  await input.pressSequentially('second line');
  await expect(input).toHaveValue('first line\nsecond line');
  await expect(panel.locator('.sqlnb-turn')).toHaveCount(0);

  // A column's name goes into the question box; so does a table's.
  await input.fill('');
  await column('customer_id').locator('.sqlnb-schema-name').click();
  await expect(input).toHaveValue(/customer_id/);
  await orders.locator('.sqlnb-schema-name').first().click();
  await expect(input).toHaveValue(/customer_id.*orders|orders.*customer_id/s);

  // A second click on the table hides the columns again.
  await orders.click({ position: { x: 4, y: 8 } });
  await expect(column('customer_id')).toBeHidden();

  // Switching connection shows the other engine's schema.
  await select.selectOption('shop_lite');
  await expect(page.locator('.sqlnb-statusbar')).toHaveText('sqlnb: shop_lite');
  await expect(schema.locator('.sqlnb-schema-table[data-name="orders"]')).toBeVisible();
});

test('answers on DuckDB and SQLite; Insert and run adds the %%sql cell at the end', async ({
  page,
  tmpPath
}, testInfo) => {
  // The files sit beside the notebook and are named relatively, as in the screenshot.
  const dir = await serverDir(page, tmpPath);
  const duck = dbInto(dir, 'duckdb', 'shop.duckdb');
  const lite = dbInto(dir, 'sqlite', 'shop.sqlite');
  const countries =
    'SELECT c.country, count(*) AS n_orders FROM orders o ' +
    'JOIN customers c ON c.id = o.customer_id GROUP BY c.country ORDER BY c.country';
  // Each model call takes 1 s, so steps are seen arriving while the question runs.
  const model = modelInto(dir, 'replies.json', {
    replies: [
      // DuckDB: a wrong table first (a failed attempt), then the right query, then FINAL.
      sqlReply('SELECT count(*) AS n_orders FROM order_lines'),
      sqlReply('SELECT count(*) AS n_orders FROM orders'),
      'FINAL',
      // SQLite
      sqlReply(countries),
      'FINAL'
    ],
    delay: 1
  });
  const nb = await openNotebook(
    page,
    tmpPath,
    'ask.ipynb',
    setupCells({
      connections: [
        { kind: 'sqlite', file: lite, name: 'shop_lite' },
        { kind: 'duckdb', file: duck, name: 'shop' }
      ],
      model
    })
  );
  const panel = await openPanel(page);
  await expect(panel.locator('.sqlnb-connections')).toHaveValue('shop');

  // --- DuckDB
  const q1 = 'How many orders are there?';
  await ask(panel, q1);
  const t1 = turn(panel, q1);
  await expect(t1).toHaveCount(1);
  // The failed attempt streams in while the model is still working on its correction.
  const failed = t1.locator('.sqlnb-step[data-kind="attempt"][data-ok="false"]');
  await expect(failed).toBeVisible();
  await expect(t1).not.toHaveAttribute('data-status', /.+/, { timeout: 1 });
  await expect(t1).toHaveClass(/sqlnb-running/, { timeout: 1 });
  await expect(panel.locator('.sqlnb-stop')).toBeVisible();
  expect(await finalStatus(t1)).toBe('success');
  // Every attempt is a step of the turn: the failed one, then the one that worked (the
  // steps fold away under a summary once the answer is there).
  const attempts = t1.locator('.sqlnb-step[data-kind="attempt"]');
  expect(await attempts.count()).toBeGreaterThanOrEqual(2);
  await expect(attempts.first()).toHaveAttribute('data-ok', 'false');
  await expect(attempts.first()).toContainText(/order_lines/);
  await expect(attempts.last()).toHaveAttribute('data-ok', 'true');
  // the answer's SQL laid out one clause per line in the dialect
  await expect(t1.locator('.sqlnb-answer .sqlnb-sql')).toHaveText(
    /^SELECT\n {2}COUNT\(\*\) AS n_orders\nFROM orders$/
  );
  const result = t1.locator('.sqlnb-answer table.sqlnb-result');
  await expect(result).toBeVisible();
  await expect(result.locator('thead, tr').first()).toContainText('n_orders');
  expect(await tableRows(result)).toEqual([['7']]);
  await expect(panel.locator('.sqlnb-stop')).toBeHidden();
  await page.sidebar.setWidth(460, 'right');
  await screenshot(page, 'panel.png', n => testInfo.outputPath(n));

  // Insert and run: a new cell at the end of the notebook (asked in the panel), run,
  // showing the result, whichever cell was active.
  const before = await cells(page, nb);
  await setActiveCell(page, nb, 1);
  await t1.locator('.sqlnb-insert-run').click();
  await expect.poll(async () => (await cells(page, nb)).length).toBe(before.length + 1);
  let now = await cells(page, nb);
  const end = before.length;
  const inserted = now[end];
  expect(inserted.cell_type).toBe('code');
  expect(inserted.source).toMatch(
    /^%%sql --conn shop\n-- sqlnb ask: How many orders are there\? \| model: .+ \| attempts: \d+\n/
  );
  // the SQL reads one clause per line (the dialect's pretty form)
  expect(inserted.source).toMatch(/SELECT\s+count\(\*\) AS n_orders\s+FROM orders/i);
  expect(now.slice(0, end).map(c => c.source)).toEqual(before.map(c => c.source));
  await expect.poll(async () => (await cells(page, nb))[end].execution_count).not.toBeNull();
  now = await cells(page, nb);
  const html = JSON.stringify(now[end].outputs);
  expect(html).toContain('<table');
  expect(outputText(now[end])).toMatch(/n_orders[\s\S]*\b7\b/);
  // The rendered output in the notebook shows the table too.
  const outputTable = (await page.notebook.getCellOutputLocator(end))!.locator('table');
  await expect(outputTable.first()).toContainText('7');

  // --- SQLite: switch in the panel; the status bar follows.
  await panel.locator('.sqlnb-connections').selectOption('shop_lite');
  await expect(page.locator('.sqlnb-statusbar')).toHaveText('sqlnb: shop_lite');
  const q2 = 'Orders per country?';
  await ask(panel, q2);
  const t2 = turn(panel, q2);
  expect(await finalStatus(t2)).toBe('success');
  await expect(t2.locator('.sqlnb-step[data-kind="attempt"]').last()).toHaveAttribute('data-ok', 'true');
  expect(await tableRows(t2.locator('table.sqlnb-result'))).toEqual([
    ['FI', '1'],
    ['UK', '2'],
    ['US', '4']
  ]);
  // The DuckDB turn stays above it.
  await expect(panel.locator('.sqlnb-turn')).toHaveCount(2);

  const count = (await cells(page, nb)).length;
  await t2.locator('.sqlnb-insert-run').click();
  await expect.poll(async () => (await cells(page, nb)).length).toBe(count + 1);
  await expect.poll(async () => (await cells(page, nb))[count].execution_count).not.toBeNull();
  now = await cells(page, nb);
  expect(now[count].source).toMatch(/^%%sql --conn shop_lite\n-- sqlnb ask: Orders per country\?/);
  expect(outputText(now[count])).toMatch(/FI[\s\S]*UK[\s\S]*US/);

  // Insert (without run) adds the cell unrun, and the notebook has the keyboard with the
  // new cell active: Shift+Enter runs it (it does not press Insert again).
  const count2 = now.length;
  await t2.locator('.sqlnb-insert').click();
  await expect.poll(async () => (await cells(page, nb)).length).toBe(count2 + 1);
  expect(await activeCellIndex(page, nb)).toBe(count2);
  expect((await cells(page, nb))[count2].execution_count).toBeNull();
  await page.keyboard.press('Shift+Enter');
  await expect.poll(async () => (await cells(page, nb))[count2].execution_count).not.toBeNull();
  now = await cells(page, nb);
  expect(now.filter(c => c.source === now[count2].source)).toHaveLength(2); // the run one and this one
  expect(outputText(now[count2])).toMatch(/FI[\s\S]*UK[\s\S]*US/);

  // Copy puts the same cell source on the clipboard.
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await t2.locator('.sqlnb-copy').click();
  await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(now[count2].source);
});

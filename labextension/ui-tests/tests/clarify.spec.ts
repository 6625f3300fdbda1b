/**
 * A clarification round in the panel: the model asks a question back, the person
 * answers inline in the turn, and the final answer arrives.
 */
import {
  ask,
  cells,
  dbInto,
  expect,
  flat,
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
  await expect(last.locator('.sqlnb-sql')).toContainText(/DATE '2024-02-01'|CAST\('2024-02-01' AS DATE\)/);
  expect(await tableRows(last.locator('table.sqlnb-result'))).toEqual([['2']]);
  // The clarification is answered: no input left open on the first turn.
  await expect(first.locator('.sqlnb-clarify-input')).toHaveCount(0);
});

test('a question with several readings is asked back by sqlnb, its best guess ready to insert', async ({
  page,
  tmpPath
}) => {
  const dir = await serverDir(page, tmpPath);
  const duck = dbInto(dir, 'duckdb', 'shop.duckdb');
  const guess = 'SELECT title, price FROM products WHERE price < 50';
  const model = modelInto(dir, 'replies.json', [
    sqlReply(guess),
    'FINAL',
    sqlReply('SELECT title, price FROM products WHERE price < 20'),
    'FINAL'
  ]);
  const nb = await openNotebook(
    page,
    tmpPath,
    'vague.ipynb',
    setupCells({ connections: [{ kind: 'duckdb', file: duck, name: 'shop' }], model })
  );
  const panel = await openPanel(page);

  await ask(panel, 'Which products are cheap?');
  const first = panel.locator('.sqlnb-turn').first();
  expect(await finalStatus(first)).toBe('needs_clarification');
  // sqlnb's question: where "cheap" starts, with the cutoff the guess took
  await expect(first.locator('.sqlnb-clarify-question')).toHaveText(
    'Where does "cheap" start? This guess takes price < 50; say the cutoff you mean.'
  );
  // the guess is shown, labelled, with its rows, and can be inserted as it is
  await expect(first.locator('.sqlnb-best-so-far')).toHaveText('Best guess:');
  expect(await tableRows(first.locator('table.sqlnb-result'))).toEqual([
    ['Keyboard', '49.5'],
    ['Mouse', '19']
  ]);
  const before = (await cells(page, nb)).length;
  await first.getByRole('button', { name: 'Insert', exact: true }).click();
  await expect.poll(async () => (await cells(page, nb)).length).toBe(before + 1);
  const inserted = (await cells(page, nb)).filter(c =>
    c.source.includes('a guess: the question was asked back')
  );
  expect(inserted).toHaveLength(1);
  expect(flat(inserted[0].source)).toContain(flat(guess));

  // the reply is answered with the question it completes, and not asked back again
  const clarify = first.locator('.sqlnb-clarify');
  await clarify.locator('.sqlnb-clarify-input').fill('under 20');
  await clarify.locator('.sqlnb-clarify-send').click();
  const last = panel.locator('.sqlnb-turn').last();
  await expect(panel.locator('.sqlnb-turn')).toHaveCount(2);
  expect(await finalStatus(last)).toBe('success');
  expect(await tableRows(last.locator('table.sqlnb-result'))).toEqual([['Mouse', '19']]);
});

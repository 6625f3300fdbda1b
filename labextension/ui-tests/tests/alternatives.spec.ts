/**
 * The other readings of an answer: when the drafts disagree, the panel lists the other
 * results they gave below the answer (folded), each with its SQL, first rows and how many
 * drafts gave it, and "Use this" inserts its cell instead of the answer's. They are saved
 * with the chat. The answer's explanation shows first.
 */
import {
  cells,
  dbCopy,
  expect,
  flat,
  finalStatus,
  notebookMetadata,
  openNotebook,
  openPanel,
  screenshot,
  scriptedModel,
  setupCells,
  sqlReply,
  tableRows,
  test,
  turn
} from './sqlnb';

const ALL = 'SELECT count(*) AS n FROM orders';
const SOME = 'SELECT count(*) AS n FROM orders WHERE quantity > 1';

const EXPLAINED =
  'This counts every order in the shop, with no filter: whatever their quantity, all count. There are 7.';

test('an explained answer: the other readings of disagreeing drafts are listed and one can be inserted instead', async ({
  page,
  tmpPath
}, testInfo) => {
  const duck = dbCopy('duckdb', 'alternatives');
  // the reply and the second draft count every order, the first draft only some
  const model = scriptedModel('alternatives', {
    replies: [sqlReply(ALL)],
    drafts: [sqlReply(SOME), sqlReply(ALL)],
    explanations: [EXPLAINED]
  });
  const nb = await openNotebook(
    page,
    tmpPath,
    'alternatives.ipynb',
    setupCells({ connections: [{ kind: 'duckdb', file: duck, name: 'shop' }], model })
  );
  const panel = await openPanel(page);
  const q = 'How many orders are there?';
  const input = panel.locator('.sqlnb-question-input');
  await input.fill(q);
  await input.press('Enter');
  const t = turn(panel, q);
  expect(await finalStatus(t)).toBe('success');
  // the explanation first, above the rating and the SQL; its step among the others
  const answer = t.locator('.sqlnb-answer');
  await expect(answer.locator('> :first-child')).toHaveClass(/sqlnb-explanation/);
  await expect(answer.locator('.sqlnb-explanation')).toHaveText(EXPLAINED);
  await expect(t.locator('.sqlnb-step-label', { hasText: 'Explaining the answer…' })).toHaveCount(1);

  const others = t.locator('.sqlnb-alternatives');
  await expect(others.locator('summary')).toHaveText('The drafts also gave 1 other result');
  const reading = others.locator('.sqlnb-alternative');
  await expect(reading).toBeHidden(); // folded
  await others.locator('summary').click();
  await expect(reading.locator('.sqlnb-alternative-label')).toHaveText('1. 1 draft, 1 row');
  await expect(reading.locator('.sqlnb-sql')).toContainText('quantity > 1');
  expect((await tableRows(reading.locator('table'))).length).toBe(1);

  await expect(t.locator('.sqlnb-confidence-badge')).toBeVisible();
  await screenshot(page, 'explained.png', n => testInfo.outputPath(n));
  const before = (await cells(page, nb)).length;
  await reading.getByRole('button', { name: 'Use this' }).click();
  // taken as the answer: its SQL shows, the first answer is the other reading, the rating goes
  await expect(t.locator('.sqlnb-answer > .sqlnb-sql')).toContainText('quantity > 1');
  await expect(t.locator('.sqlnb-confidence-badge')).toHaveCount(0);
  await expect(answer.locator('.sqlnb-explanation')).toHaveCount(0); // it explained the other one
  await expect(t.locator('.sqlnb-alternative-label')).toHaveText(['1. the answer kept first']);
  await expect.poll(async () => (await cells(page, nb)).length).toBe(before + 1);
  const inserted = (await cells(page, nb)).filter(c => c.source.includes('another reading'));
  expect(inserted).toHaveLength(1);
  expect(flat(inserted[0].source)).toContain(flat(SOME));
  expect(inserted[0].source.startsWith('%%sql --conn shop')).toBe(true);

  // saved with the chat: the reading picked as the answer, the first answer as the other one
  await expect
    .poll(async () => {
      const saved = (await notebookMetadata(page, nb))?.sqlnb?.chat?.turns?.[0];
      return [saved?.sql, saved?.alternatives?.[0]?.sql];
    })
    .toEqual([SOME, ALL]);
});

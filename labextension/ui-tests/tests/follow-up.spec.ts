/**
 * A follow-up question is answered as a question of its own: the kernel's done event says
 * how it read it (`answered_as`), and the panel shows that, muted, right under the question.
 * A first question has none.
 */
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
  tableRows,
  test,
  turn
} from './sqlnb';

const READ_AS = 'How many orders have a quantity over 1?';

test('a follow-up shows the question it was answered as, under the question', async ({ page, tmpPath }) => {
  const model = scriptedModel('follow-up', {
    replies: [
      sqlReply('SELECT count(*) AS n FROM orders'),
      'FINAL',
      sqlReply('SELECT count(*) AS n FROM orders WHERE quantity > 1'),
      'FINAL'
    ],
    explanations: [
      'This counts every order in the shop, with no filter: whatever their quantity, all count. There are 7.',
      `Question on its own: ${READ_AS}\n\nThis counts the orders whose quantity is more than 1. There are 4.`
    ]
  });
  await openNotebook(
    page,
    tmpPath,
    'follow-up.ipynb',
    setupCells({
      connections: [{ kind: 'duckdb', file: dbCopy('duckdb', 'follow-up'), name: 'shop' }],
      model
    })
  );
  const panel = await openPanel(page);
  const q1 = 'How many orders are there?';
  await ask(panel, q1);
  const t1 = turn(panel, q1);
  expect(await finalStatus(t1)).toBe('success');
  await expect(t1.locator('.sqlnb-answered-as')).toHaveCount(0);

  const q2 = 'And those with more than one item?';
  await ask(panel, q2);
  const t2 = turn(panel, q2);
  expect(await finalStatus(t2)).toBe('success');
  expect(await tableRows(t2.locator('table.sqlnb-result'))).toEqual([['4']]);
  const readAs = t2.locator('.sqlnb-user-question + .sqlnb-answered-as');
  await expect(readAs).toHaveText(`Answered as: ${READ_AS}`);
  await expect(readAs).toHaveClass(/sqlnb-muted/);
  await expect(t1.locator('.sqlnb-answered-as')).toHaveCount(0);
});

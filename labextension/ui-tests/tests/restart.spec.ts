/**
 * A kernel restart drops the panel's comm and sqlnb itself: the panel reconnects to the
 * new kernel and loads sqlnb silently (no cell, no execution count), keeps the chat, offers
 * one-click Reconnect of the database connections the restart took, and the next question
 * carries the earlier turns to the kernel's conversation.
 */
import {
  ask,
  cells,
  dbCopy,
  expect,
  finalStatus,
  openNotebook,
  openPanel,
  outputText,
  runCellInPlace,
  scriptedModel,
  setupCells,
  sqlReply,
  test as sqlnbTest,
  turn,
  waitForKernelIdle
} from './sqlnb';

// Galata's mock of the kernels API answers a restart with 201, which JupyterLab refuses:
// this test leaves that API unmocked (the sessions mock still shuts its kernel down).
const test = sqlnbTest.extend({
  // eslint-disable-next-line no-empty-pattern
  kernels: async ({}, use) => {
    await use(null as any);
  }
});

test('after a kernel restart the panel reconnects silently and keeps the chat', async ({ page, tmpPath }) => {
  const duck = dbCopy('duckdb', 'restart');
  // The restarted kernel reads the script from the start again: one answer serves both.
  const model = scriptedModel('restart', [sqlReply('SELECT count(*) AS n FROM orders'), 'FINAL']);
  const nb = await openNotebook(
    page,
    tmpPath,
    'restart.ipynb',
    setupCells({ connections: [{ kind: 'duckdb', file: duck, name: 'shop' }], model })
  );
  const panel = await openPanel(page);
  const q1 = 'How many orders?';
  await ask(panel, q1);
  expect(await finalStatus(turn(panel, q1))).toBe('success');
  const before = await cells(page, nb);

  // Restart the kernel (what Kernel > Restart Kernel does, without its dialog).
  const kernelId = await page.evaluate(async p => {
    const panel = (window as any).sqlnbTest.panel(p);
    const old = panel.sessionContext.session.kernel.id;
    await panel.sessionContext.session.kernel.restart();
    return old;
  }, nb);
  expect(kernelId).toBeTruthy();
  await waitForKernelIdle(page, nb);

  // The panel is back on the new kernel: sqlnb loaded there silently, so the magics work
  // without %load_ext; the new kernel has no connection yet.
  await expect(panel.locator('.sqlnb-banner')).not.toHaveClass(/sqlnb-banner-error/);
  await expect(panel.locator('.sqlnb-connections option[value="shop"]')).toHaveCount(0);
  await expect(turn(panel, q1)).toHaveCount(1); // the chat is kept
  const after = await cells(page, nb);
  expect(after.map(c => c.source)).toEqual(before.map(c => c.source));
  expect(after.map(c => c.execution_count)).toEqual(before.map(c => c.execution_count));

  // One click reconnects what the kernel had (cell 1's connection, by its URL and name),
  // without running a cell; the model is the notebook's setting: its cell (2) runs again.
  await expect(panel.locator('.sqlnb-banner')).toContainText('The kernel restarted');
  await panel.locator('.sqlnb-reconnect-one', { hasText: 'Reconnect shop' }).click();
  await expect(panel.locator('.sqlnb-connections')).toHaveValue('shop');
  await expect(panel.locator('.sqlnb-connect-form')).toHaveCount(0);
  await expect(panel.locator('.sqlnb-schema-name', { hasText: 'orders' })).toHaveCount(1);
  expect((await cells(page, nb))[1].execution_count).toBe(before[1].execution_count);
  await runCellInPlace(page, 2);
  const rerun = await cells(page, nb);
  // The silent load took no execution count: the first cell run on the new kernel is [1].
  expect(rerun[2].execution_count).toBe(1);
  expect(rerun[2].outputs.filter(o => o.output_type === 'error')).toEqual([]);

  // Ask again: it works, and the kernel's conversation now holds the earlier question.
  const q2 = 'And again, how many orders?';
  await ask(panel, q2);
  expect(await finalStatus(turn(panel, q2))).toBe('success');
  await expect(turn(panel, q1)).toHaveCount(1);
  await page.evaluate(p => {
    const shared = (window as any).sqlnbTest.panel(p).content.model.sharedModel;
    shared.insertCell(shared.cells.length, { cell_type: 'code', source: '%ask history' });
  }, nb);
  const last = (await cells(page, nb)).length - 1;
  await runCellInPlace(page, last);
  const history = outputText((await cells(page, nb))[last]);
  expect(history).toContain(q1);
  expect(history).toContain(q2);
  expect(history.indexOf(q1)).toBeLessThan(history.indexOf(q2));
});

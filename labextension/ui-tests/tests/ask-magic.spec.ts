/**
 * %%ask in a cell, with the panel connected: the bridge asks the panel to insert the
 * %%sql cell (insert_cell), exactly once, right below; a reload inserts nothing more
 * (comm messages are not saved in the notebook).
 */
import {
  appendCell,
  cells,
  dbCopy,
  expect,
  flat,
  openNotebook,
  openPanel,
  runCellInPlace,
  scriptedModel,
  setupCells,
  sqlReply,
  test,
  waitForKernelIdle
} from './sqlnb';

test('%%ask inserts exactly one %%sql cell; a reload adds none', async ({ page, tmpPath }) => {
  // What the kernel sends the page (listened to before the notebook's kernel connects):
  // the cell must come through the panel's comm (insert_cell), not through the execute
  // reply's set_next_input payload.
  const frames: string[] = [];
  page.on('websocket', ws => {
    ws.on('framereceived', frame => {
      const text = typeof frame.payload === 'string' ? frame.payload : frame.payload.toString('latin1');
      if (text.includes('insert_cell') || text.includes('set_next_input')) {
        frames.push(text);
      }
    });
  });
  const duck = dbCopy('duckdb', 'askmagic');
  const model = scriptedModel('askmagic', [sqlReply('SELECT count(*) AS n FROM customers'), 'FINAL']);
  const nb = await openNotebook(
    page,
    tmpPath,
    'askmagic.ipynb',
    setupCells({ connections: [{ kind: 'duckdb', file: duck, name: 'shop' }], model })
  );
  const panel = await openPanel(page);
  await expect(panel.locator('.sqlnb-connections')).toHaveValue('shop'); // the comm is open

  const askCell = await appendCell(page, nb, '%%ask\nHow many customers?');
  await appendCell(page, nb, '# the end');
  await runCellInPlace(page, askCell);
  await expect.poll(async () => (await cells(page, nb)).length).toBe(askCell + 3);
  let now = await cells(page, nb);
  expect(now[askCell].execution_count).not.toBeNull();
  expect(now[askCell].outputs.filter(o => o.output_type === 'error')).toEqual([]);
  const inserted = now[askCell + 1];
  expect(inserted.source).toMatch(
    /^%%sql --conn shop\n-- sqlnb ask: How many customers\? \| model: .+ \| attempts: \d+\n/
  );
  expect(flat(inserted.source)).toContain(flat('SELECT count(*) AS n FROM customers'));
  expect(now[askCell + 2].source).toBe('# the end');
  expect(now.filter(c => c.source.startsWith('%%sql'))).toHaveLength(1);
  expect(frames.filter(f => f.includes('"insert_cell"'))).toHaveLength(1);
  expect(frames.filter(f => f.includes('set_next_input'))).toHaveLength(0);

  // Saved and reloaded: still exactly one %%sql cell.
  expect(await page.notebook.save()).toBe(true);
  await page.reload({ waitForIsReady: false });
  await page.waitForFunction(p => !!(window as any).sqlnbTest?.panel(p), nb, { timeout: 60000 });
  await waitForKernelIdle(page, nb);
  const again = await openPanel(page);
  await expect(again.locator('.sqlnb-connections')).toHaveValue('shop'); // reconnected
  now = await cells(page, nb);
  expect(now).toHaveLength(askCell + 3);
  expect(now.filter(c => c.source.startsWith('%%sql'))).toHaveLength(1);
});

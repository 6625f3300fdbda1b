/**
 * Faults a person causes: Enter pressed twice sends one question, Stop pressed twice ends
 * the run once, and a notebook closed while its question is answered inserts nothing
 * anywhere; the panel stays usable without a reload.
 */
import {
  ask,
  cells,
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

/** 'True' while a sqlnb question thread runs in the kernel of the notebook at `path`
 * (asked over a new kernel connection, so it works after the notebook was closed). */
async function questionRunning(page: any, path: string): Promise<string> {
  return page.evaluate(async (p: string) => {
    const app = (window as any).jupyterapp;
    const model = [...app.serviceManager.sessions.running()].find((s: any) => s.path.endsWith(p));
    if (!model) {
      return 'no session';
    }
    const session = app.serviceManager.sessions.connectTo({ model });
    try {
      let out = '';
      const future = session.kernel.requestExecute({
        code: "import threading as _t; print(any(x.name.startswith('sqlnb-ask') and x.is_alive() for x in _t.enumerate()), [x.name for x in _t.enumerate()], [(t['question'], t['status']) for t in __import__('sqlnb.kernel', fromlist=['kernel_session']).kernel_session(get_ipython()).ask.agent.history('shop_a')])",
        silent: false,
        store_history: false
      });
      future.onIOPub = (msg: any) => {
        if (msg.header.msg_type === 'stream') {
          out += msg.content.text;
        }
      };
      await future.done;
      return out.trim();
    } finally {
      session.dispose();
    }
  }, path);
}

test('Enter twice sends one question; Stop twice ends it once', async ({ page, tmpPath }) => {
  const slow = scriptedModel('twice-slow', {
    replies: [sqlReply('SELECT count(*) AS n FROM customers'), 'FINAL', sqlReply('SELECT 1 AS one'), 'FINAL'],
    delay: 2
  });
  await openNotebook(
    page,
    tmpPath,
    'twice.ipynb',
    setupCells({
      connections: [{ kind: 'duckdb', file: dbCopy('duckdb', 'twice'), name: 'shop' }],
      model: slow
    })
  );
  const panel = await openPanel(page);
  const input = panel.locator('.sqlnb-question-input');
  const stop = panel.locator('.sqlnb-stop');

  // Enter, Enter: one turn, and the kernel is asked once (a second ask would say busy).
  await input.fill('How many customers?');
  await input.press('Enter');
  await input.press('Enter');
  await expect(panel.locator('.sqlnb-turn')).toHaveCount(1);
  const t1 = turn(panel, 'How many customers?');
  expect(await finalStatus(t1)).toBe('success');
  expect(await tableRows(t1.locator('table.sqlnb-result'))).toEqual([['4']]);
  await expect(panel.locator('.sqlnb-turn')).toHaveCount(1);
  await expect(panel.locator('.sqlnb-banner')).not.toHaveClass(/sqlnb-banner-error/);

  // Stop, Stop: the run ends stopped once, with no error, and the panel takes a new question.
  await ask(panel, 'Anything else?');
  const t2 = turn(panel, 'Anything else?');
  await expect(stop).toBeVisible();
  await stop.click();
  await stop.click({ force: true, timeout: 2000 }).catch(() => undefined); // hidden already: fine
  expect(await finalStatus(t2)).toBe('stopped');
  await expect(stop).toBeHidden();
  await expect(panel.locator('.sqlnb-banner')).not.toHaveClass(/sqlnb-banner-error/);
  await expect(panel.locator('.sqlnb-turn')).toHaveCount(2);
  await ask(panel, 'One more?');
  expect(await finalStatus(turn(panel, 'One more?'))).not.toBe('error');
  await expect(panel.locator('.sqlnb-turn')).toHaveCount(3);
});

test('a notebook closed mid-answer: nothing is inserted anywhere, the panel goes on', async ({
  page,
  tmpPath
}) => {
  const slowA = scriptedModel('closed-a', {
    replies: [sqlReply('SELECT count(*) AS n FROM products'), 'FINAL'],
    delay: 2
  });
  const modelB = scriptedModel('closed-b', [sqlReply('SELECT count(*) AS n FROM customers'), 'FINAL']);
  const a = await openNotebook(
    page,
    tmpPath,
    'closing.ipynb',
    setupCells({
      connections: [{ kind: 'duckdb', file: dbCopy('duckdb', 'closing-a'), name: 'shop_a' }],
      model: slowA
    })
  );
  const b = await openNotebook(
    page,
    tmpPath,
    'staying.ipynb',
    setupCells({
      connections: [{ kind: 'duckdb', file: dbCopy('duckdb', 'closing-b'), name: 'shop_b' }],
      model: modelB
    })
  );
  const cellsB = (await cells(page, b)).length;
  const panel = await openPanel(page);

  // Ask in A, then close A (discarding unsaved changes) while the answer is coming.
  await page.notebook.activate('closing.ipynb');
  await expect(panel.locator('.sqlnb-connections')).toHaveValue('shop_a');
  await ask(panel, 'How many products?');
  await expect(panel.locator('.sqlnb-stop')).toBeVisible();
  await page.notebook.close(true);
  await page.notebook.activate('staying.ipynb');
  await expect(panel.locator('.sqlnb-connections')).toHaveValue('shop_b');
  await expect(panel.locator('.sqlnb-turn')).toHaveCount(0);

  // Closing a notebook keeps its kernel, which finishes the question: ask that kernel (over
  // a connection of our own) until the question has ended there.
  await expect
    .poll(() => questionRunning(page, 'closing.ipynb'), { timeout: 30000, intervals: [250] })
    .toMatch(/^False .* \[\('How many products\?', '(success|stopped)'\)\]$/);
  await ask(panel, 'How many customers?');
  const tB = turn(panel, 'How many customers?');
  expect(await finalStatus(tB)).toBe('success');
  expect(await tableRows(tB.locator('table.sqlnb-result'))).toEqual([['4']]);
  await expect(panel.locator('.sqlnb-banner')).not.toHaveClass(/sqlnb-banner-error/);
  expect((await cells(page, b)).length).toBe(cellsB);
  expect(a).toContain('closing.ipynb');
  expect(await questionRunning(page, 'closing.ipynb')).toMatch(/^False/);
});

/**
 * What the panel shows when a question goes wrong, and what it never shows: a question
 * whose every attempt fails ends `failed` with no answer to insert, a model that breaks
 * ends `error` with a message, a kernel without a connection says how to make one, and a
 * connection's password reaches neither the page nor the notebook.
 */
import {
  appendCell,
  ask,
  cells,
  dbCopy,
  expect,
  finalStatus,
  notebookMetadata,
  openNotebook,
  openPanel,
  outputText,
  runCellInPlace,
  savedNotebook,
  scriptedModel,
  setupCells,
  sqlReply,
  test,
  turn
} from './sqlnb';

test('failed and broken questions say so, with nothing to insert', async ({ page, tmpPath }) => {
  const model = scriptedModel('errors', [
    // three failures in a row: the agent gives up (failed)
    sqlReply('SELECT * FROM zz_no_such_table_1'),
    sqlReply('SELECT * FROM zz_no_such_table_2'),
    sqlReply('SELECT * FROM zz_no_such_table_3')
    // then nothing left: the next question's model call fails (error)
  ]);
  await openNotebook(
    page,
    tmpPath,
    'errors.ipynb',
    setupCells({ connections: [{ kind: 'sqlite', file: dbCopy('sqlite', 'errors'), name: 'shop' }], model })
  );
  const panel = await openPanel(page);

  const q1 = 'Where is the missing table?';
  await ask(panel, q1);
  const t1 = turn(panel, q1);
  expect(await finalStatus(t1)).toBe('failed');
  const attempts = t1.locator('.sqlnb-step[data-kind="attempt"]');
  expect(await attempts.count()).toBeGreaterThanOrEqual(3);
  await expect(t1.locator('.sqlnb-step[data-kind="attempt"][data-ok="true"]')).toHaveCount(0);
  await expect(t1.locator('.sqlnb-answer')).toHaveCount(0);
  await expect(t1.locator('.sqlnb-insert, .sqlnb-insert-run')).toHaveCount(0);

  const q2 = 'And now?';
  await ask(panel, q2);
  const t2 = turn(panel, q2);
  expect(await finalStatus(t2)).toBe('error');
  await expect(t2.locator('.sqlnb-error')).toBeVisible();
  await expect(t2.locator('.sqlnb-error')).toContainText(/no reply left/);
  await expect(t2.locator('.sqlnb-insert, .sqlnb-insert-run')).toHaveCount(0);
  // The panel still works for the next question (the kernel is not stuck).
  await expect(panel.locator('.sqlnb-stop')).toBeHidden();
  await expect(panel.locator('.sqlnb-question-input')).toBeEnabled();
});

test('a kernel without a connection: the panel names %sqlnb connect', async ({ page, tmpPath }) => {
  await openNotebook(page, tmpPath, 'noconn.ipynb', ['%load_ext sqlnb']);
  const panel = await openPanel(page);
  await expect(panel.locator('.sqlnb-banner')).toContainText('%sqlnb connect');
  await expect(panel.locator('.sqlnb-schema-table')).toHaveCount(0);
});

test("a connection's password reaches neither the page nor the notebook", async ({
  page,
  request,
  tmpPath
}) => {
  // The password is assembled in the kernel, so no cell holds it: anything the page or the
  // notebook shows of it came from sqlnb.
  const secret = 'UiSecret-4821';
  const frames: string[] = [];
  page.on('websocket', ws => {
    ws.on('framereceived', frame => {
      frames.push(typeof frame.payload === 'string' ? frame.payload : frame.payload.toString('latin1'));
    });
  });
  const model = scriptedModel('secret', [sqlReply('SELECT 1 AS one'), 'FINAL']);
  // Two ways in: the password in the URL (IPython expands {pw}), and PGPASSWORD.
  const nb = await openNotebook(
    page,
    tmpPath,
    'secret.ipynb',
    [
      '%load_ext sqlnb',
      'import os\npw = "UiSec" + "ret-4821"\nos.environ["PGPASSWORD"] = pw',
      '%sqlnb connect postgresql://sqlnb@127.0.0.1:5432/postgres --name pg_env',
      '%sqlnb connect postgresql://sqlnb:{pw}@127.0.0.1:5432/postgres --name pg',
      `%config AskMagic.model = ${JSON.stringify(model)}`
    ],
    { run: false }
  );
  expect(await page.notebook.run()).toBe(true);
  const setup = await cells(page, nb);
  expect(setup.flatMap(c => c.outputs).filter(o => o.output_type === 'error')).toEqual([]);
  // the URL with a password gets sqlnb's advice on stderr, without the password
  expect(outputText(setup[3])).toContain('holds a password');
  const panel = await openPanel(page);
  await expect(panel.locator('.sqlnb-connections')).toHaveValue('pg');
  await expect(panel.locator('.sqlnb-connections option[value="pg_env"]')).toHaveCount(1);
  await expect(panel.locator('.sqlnb-connections option[value="pg"]')).toContainText('***');
  await ask(panel, 'One?');
  expect(await finalStatus(turn(panel, 'One?'))).toBe('success');
  const check = await appendCell(page, nb, '%sqlnb list');
  await runCellInPlace(page, check);
  expect(outputText((await cells(page, nb))[check])).not.toContain(secret);
  expect(await page.notebook.save()).toBe(true);

  const html = await page.evaluate(() => document.documentElement.outerHTML);
  expect(html).not.toContain(secret);
  expect(frames.length).toBeGreaterThan(0);
  expect(frames.filter(f => f.includes(secret))).toEqual([]);
  expect(JSON.stringify(await notebookMetadata(page, nb))).not.toContain(secret);
  expect(JSON.stringify(await savedNotebook(request, nb))).not.toContain(secret);
});

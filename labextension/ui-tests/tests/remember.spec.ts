/**
 * An answer's confidence badge and the thumbs-up: the badge shows the level with its
 * reasons (on hover and on expand), the thumbs-up stores the question and its SQL in the
 * kernel's memory store once, and the remembered state survives a page reload (it is
 * saved with the chat in the notebook's metadata). A later answer that is not trusted
 * starts over with the remembered answers, and the panel says so.
 */
import {
  appendCell,
  ask,
  cells,
  dbCopy,
  expect,
  flat,
  finalStatus,
  notebookMetadata,
  openNotebook,
  openPanel,
  outputText,
  runCellInPlace,
  savedNotebook,
  screenshot,
  scriptedModel,
  setupCells,
  sqlReply,
  test,
  turn,
  waitForKernelIdle
} from './sqlnb';

test.use({ viewport: { width: 1400, height: 850 } });

const PAID = 'SELECT id, quantity FROM orders WHERE quantity > 1 ORDER BY id';

/**
 * The memory store's entries of a question as the kernel reads them (sqlnb.agent.memory;
 * the server's kernels share one SQLNB_HOME, where other tests' answers are kept too).
 */
async function storedPairs(page: any, nbPath: string, question: string): Promise<any[]> {
  const code = [
    'import json',
    'from sqlnb.agent.memory import MemoryStore',
    'print("MEMORY=" + json.dumps([{k: e[k] for k in ("question", "sql", "source", "connection", "times")}',
    `                              for e in MemoryStore().entries() if e["question"] == ${JSON.stringify(question)}]))`
  ].join('\n');
  const index = await appendCell(page, nbPath, code);
  await runCellInPlace(page, index);
  let text = '';
  await expect
    .poll(async () => {
      text = outputText((await cells(page, nbPath))[index]);
      return text;
    })
    .toContain('MEMORY=');
  return JSON.parse(text.slice(text.indexOf('MEMORY=') + 'MEMORY='.length).trim());
}

test('the confidence badge, and the thumbs-up remembers the answer once, also after a reload', async ({
  page,
  request,
  tmpPath
}, testInfo) => {
  const duck = dbCopy('duckdb', 'remember');
  const model = scriptedModel('remember', [sqlReply(PAID), 'FINAL']);
  const nb = await openNotebook(
    page,
    tmpPath,
    'remember.ipynb',
    setupCells({ connections: [{ kind: 'duckdb', file: duck, name: 'shop' }], model })
  );
  let panel = await openPanel(page);
  const q = 'Which orders have a quantity of more than one?';
  await ask(panel, q);
  let t = turn(panel, q);
  expect(await finalStatus(t)).toBe('success');

  // The confidence badge: a reviewed, non-empty result of one query is "medium".
  const badge = t.locator('.sqlnb-confidence-badge');
  await expect(badge).toHaveText('Medium confidence');
  await expect(t.locator('.sqlnb-confidence')).toHaveAttribute('data-level', 'medium');
  await expect(badge).toHaveAttribute(
    'aria-label',
    /^Medium confidence \(score \d+%\); 1 reason, expand to read it$/
  );
  await expect(badge).toHaveAttribute('title', /The model checked the result and kept it/);
  const reasons = t.locator('.sqlnb-confidence-reason');
  await expect(reasons).toBeHidden();
  await badge.click(); // expands the reasons
  await expect(reasons).toHaveText(['The model checked the result and kept it']);

  // The thumbs-up.
  const thumbs = t.getByRole('button', { name: 'Remember this answer' });
  await expect(thumbs).toHaveAttribute('aria-pressed', 'false');
  await page.sidebar.setWidth(460, 'right');
  await thumbs.click();
  const pressed = t.locator('.sqlnb-remember');
  await expect(pressed).toHaveAttribute('aria-pressed', 'true');
  await expect(pressed).toHaveText('Remembered');
  await expect(pressed).toHaveAccessibleName('Remembered');
  await expect(t.locator('.sqlnb-remember-error')).toHaveCount(0);
  await expect(reasons).toBeVisible(); // the reasons opened stay open
  await screenshot(page, 'remember.png', n => testInfo.outputPath(n));
  await pressed.click(); // pressed again: nothing is sent

  // The kernel stored the pair, once (a second store would count it twice).
  expect(await storedPairs(page, nb, q)).toEqual([
    { question: q, sql: PAID, source: 'thumbs_up', connection: 'shop', times: 1 }
  ]);

  // Saved with the chat: the badge and the remembered state come back after a reload.
  await expect
    .poll(async () => (await notebookMetadata(page, nb))?.sqlnb?.chat?.turns?.[0]?.remembered)
    .toEqual(expect.any(Number));
  expect(await page.notebook.save()).toBe(true);
  const saved = (await savedNotebook(request, nb)).metadata.sqlnb.chat.turns[0];
  expect(saved.confidence.level).toBe('medium');
  expect(typeof saved.remembered).toBe('number');

  await page.reload({ waitForIsReady: false });
  await page.waitForFunction(p => !!(window as any).sqlnbTest?.panel(p), nb, { timeout: 60000 });
  await waitForKernelIdle(page, nb);
  panel = await openPanel(page);
  t = turn(panel, q);
  await expect(t).toHaveAttribute('data-status', 'success');
  await expect(t.locator('.sqlnb-confidence-badge')).toHaveText('Medium confidence');
  await expect(t.locator('.sqlnb-remember')).toHaveAttribute('aria-pressed', 'true');
  await expect(t.locator('.sqlnb-remember')).toHaveText('Remembered');
  await t.locator('.sqlnb-remember').click(); // still nothing to send
  expect(await storedPairs(page, nb, q)).toEqual([
    { question: q, sql: PAID, source: 'thumbs_up', connection: 'shop', times: 1 }
  ]);
});

test('a clarification with a best query offers it, and a failed remember says why', async ({
  page,
  tmpPath
}) => {
  const duck = dbCopy('duckdb', 'remember-clarify');
  const model = scriptedModel('remember-clarify', [
    sqlReply('SELECT count(*) AS n FROM orders'),
    'CLARIFY: Orders of which month?'
  ]);
  const nb = await openNotebook(page, tmpPath, 'remember-clarify.ipynb', [
    ...setupCells({ connections: [{ kind: 'duckdb', file: duck, name: 'shop' }], model }),
    // the memory switched off: remembering fails with the kernel's reason
    'from sqlnb.kernel import kernel_session; kernel_session(get_ipython()).ask.agent.use_memory = False'
  ]);
  const panel = await openPanel(page);
  const q = 'How many orders were placed?';
  await ask(panel, q);
  const t = turn(panel, q);
  expect(await finalStatus(t)).toBe('needs_clarification');
  await expect(t.locator('.sqlnb-clarify-question')).toHaveText(['Orders of which month?']);
  // the best query found before the question, usable as it is
  await expect(t.locator('.sqlnb-best-so-far')).toBeVisible();
  await expect(t.locator('.sqlnb-answer .sqlnb-sql')).toContainText(/count\(\*\)/i);
  await expect(t.locator('.sqlnb-confidence-badge')).toBeVisible();
  await expect(t.locator('.sqlnb-insert')).toBeVisible();
  await expect(t.locator('.sqlnb-copy')).toBeVisible();
  await t.locator('.sqlnb-insert').click();
  await expect
    .poll(async () =>
      (await cells(page, nb)).some(c => flat(c.source).includes(flat('SELECT count(*) AS n FROM orders')))
    )
    .toBe(true);

  await t.getByRole('button', { name: 'Remember this answer' }).click();
  const error = t.locator('.sqlnb-remember-error');
  await expect(error).toHaveText(/memory of accepted answers is off.*use_memory = True/);
  await expect(error).toHaveAttribute('role', 'alert');
  await expect(t.locator('.sqlnb-remember')).toHaveAttribute('aria-pressed', 'false');
});

test('a turn that starts over with remembered answers says so between its attempts', async ({
  page,
  tmpPath
}, testInfo) => {
  const duck = dbCopy('duckdb', 'remember-again');
  const ada = "SELECT country FROM customers WHERE name = 'Ada'";
  // every customer's name and country: it leaves out the name asked about (rated low)
  // while reading the name column, so no filter on it is added for the draft
  const every = 'SELECT name, country FROM customers';
  const linus = "SELECT country FROM customers WHERE name = 'Linus'";
  // each question: the model's reply and one draft that agrees with it; the second
  // question's first answer leaves out the name it asks about (rated low)
  const model = scriptedModel('remember-again', {
    replies: [sqlReply(ada), sqlReply(every), sqlReply(linus)],
    drafts: [sqlReply(ada), sqlReply(every), sqlReply(linus)]
  });
  await openNotebook(
    page,
    tmpPath,
    'remember-again.ipynb',
    setupCells({ connections: [{ kind: 'duckdb', file: duck, name: 'shop' }], model })
  );
  const panel = await openPanel(page);
  const q1 = 'Which country is Ada from?';
  await ask(panel, q1);
  const t1 = turn(panel, q1);
  expect(await finalStatus(t1)).toBe('success');
  await t1.getByRole('button', { name: 'Remember this answer' }).click();
  await expect(t1.locator('.sqlnb-remember')).toHaveAttribute('aria-pressed', 'true');

  const q2 = 'Which country is Linus from?';
  await ask(panel, q2);
  const t2 = turn(panel, q2);
  expect(await finalStatus(t2)).toBe('success');
  await expect(t2.locator('.sqlnb-answer .sqlnb-sql')).toContainText("name = 'Linus'");
  const summary = t2.locator('.sqlnb-steps-box > summary');
  await expect(summary).toHaveText('2 attempts · asked again with 1 remembered answer');
  await summary.click();
  const steps = t2.locator('.sqlnb-step');
  const labels = await steps.evaluateAll(nodes =>
    nodes.map(n => `${(n as HTMLElement).dataset.kind}: ${n.querySelector('.sqlnb-step-label')?.textContent}`)
  );
  const note =
    'note: Not sure of that answer (low confidence): asking again with 1 remembered answer of this database as examples…';
  const at = labels.indexOf(note);
  expect(at).toBeGreaterThan(0);
  expect(labels.slice(0, at).filter(l => l.startsWith('attempt: Attempt 1 of'))).toHaveLength(1);
  expect(labels.slice(at).filter(l => l.startsWith('attempt: Attempt 1 of'))).toHaveLength(1);
  await screenshot(page, 'remember-again.png', n => testInfo.outputPath(n));
});

/**
 * A newcomer's first ten minutes, as the README's first screen tells them: `scripts/demo`
 * (here with `--no-browser`, on a free port, the demo in a folder of this run), then the
 * demo notebook in JupyterLab, its first cells run, one question asked in the sidebar, and
 * the answer's `%%sql` cell inserted into the notebook. The model is a scripted one
 * (SQLNB_MODEL, which the demo notebook leaves alone): no network.
 */
import { expect, test } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

import { cellWith, freePort, IServer, openSidebar, runCell, startServer, stopServer } from './launch';
import { ask, DATA_DIR, finalStatus, sqlReply, turn } from './sqlnb';

let server: IServer | undefined;
let demoDir: string;

test.beforeAll(async () => {
  test.setTimeout(360000);
  const dir = path.join(DATA_DIR, 'newcomer');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  demoDir = path.join(dir, 'demo');
  // Works on whatever tables the sample database has.
  const model = path.join(dir, 'model.json');
  fs.writeFileSync(
    model,
    JSON.stringify([
      sqlReply("SELECT count(*) AS tables FROM information_schema.tables WHERE table_schema = 'main'"),
      'FINAL'
    ])
  );
  const port = await freePort();
  server = await startServer(
    path.join('scripts', 'demo'),
    ['--dir', demoDir, '--port', String(port), '--no-browser'],
    {
      port,
      log: path.join(dir, 'demo.log'),
      timeout: 300000,
      env: {
        SQLNB_MODEL: `scripted:${model}`,
        // this run's own JupyterLab settings and workspace, not the machine user's
        JUPYTERLAB_SETTINGS_DIR: path.join(dir, 'settings'),
        JUPYTERLAB_WORKSPACES_DIR: path.join(dir, 'workspaces')
      }
    }
  );
});

test.afterAll(async () => {
  await stopServer(server?.process);
});

test('scripts/demo, the demo notebook, one question in the sidebar, its cell inserted', async ({ page }) => {
  expect(fs.existsSync(path.join(demoDir, 'sample.duckdb'))).toBe(true);
  await page.goto(server!.url('lab/tree/sqlnb-demo.ipynb'));
  await expect(page.locator('.jp-NotebookPanel .jp-Notebook')).toBeVisible({ timeout: 60000 });

  // The newcomer runs the notebook's first cell: sqlnb loaded, the sample connected.
  const connect = cellWith(page, '%sqlnb connect').first();
  await runCell(connect);
  await expect(
    connect.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
  ).toHaveCount(0);

  const panel = await openSidebar(page);
  await expect(panel.locator('.sqlnb-connections')).not.toHaveValue('', { timeout: 30000 });
  await expect(panel.locator('.sqlnb-schema-table').first()).toBeVisible({ timeout: 30000 });

  const question = 'How many tables does the sample have?';
  await ask(panel, question);
  const t = turn(panel, question);
  expect(await finalStatus(t, 90000)).toBe('success');
  await expect(t.locator('.sqlnb-answer .sqlnb-sql')).toContainText('information_schema.tables');

  await t.locator('.sqlnb-insert').click();
  const inserted = cellWith(page, `sqlnb ask: ${question}`);
  await expect(inserted).toHaveCount(1);
  await expect(inserted.locator('.cm-content')).toContainText(/^%%sql --conn \S+/);
  await expect(inserted.locator('.cm-content')).toContainText('information_schema.tables');
});

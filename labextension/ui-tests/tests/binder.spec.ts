/**
 * The Binder launch, here: binder/check copies the repository, makes a fresh virtual
 * environment, runs `pip install -r binder/requirements.txt` and binder/postBuild as
 * repo2docker does, and serves that environment's JupyterLab. The page opens the Binder
 * link's notebook (?urlpath=lab/tree/demo/sqlnb-demo.ipynb), finds the sqlnb sidebar
 * installed, runs the notebook's connect cell and sees the sample database's tables.
 */
import { expect, test } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

import { cellWith, freePort, IServer, openSidebar, runCell, startServer, stopServer } from './launch';
import { DATA_DIR } from './sqlnb';

let server: IServer | undefined;

test.beforeAll(async () => {
  // a fresh environment: the packages (from pip's cache when warm) and the sidebar's build
  test.setTimeout(600000);
  const dir = path.join(DATA_DIR, 'binder');
  const port = await freePort();
  server = await startServer(path.join('binder', 'check'), ['--dir', dir, '--serve', String(port)], {
    port,
    log: path.join(DATA_DIR, 'binder-check.log'),
    timeout: 570000
  });
});

test.afterAll(async () => {
  await stopServer(server?.process);
});

test('the Binder build opens the demo notebook with the sidebar and the sample database', async ({
  page
}) => {
  const repo = path.join(DATA_DIR, 'binder', 'repo');
  expect(fs.existsSync(path.join(repo, 'demo', 'sample.duckdb'))).toBe(true);
  // the sidebar is the one built in the copy and installed into the fresh environment
  const listed = await (await fetch(server!.url('lab/api/extensions'))).json();
  const sqlnb = (listed as any[]).find(e => e.name === 'sqlnb');
  expect(sqlnb?.enabled).toBe(true);
  expect(sqlnb?.installed).toBe(true);

  await page.goto(server!.url('lab/tree/demo/sqlnb-demo.ipynb'));
  await expect(page.locator('.jp-NotebookPanel .jp-Notebook')).toBeVisible({ timeout: 60000 });
  const panel = await openSidebar(page);
  await expect(panel.locator('.sqlnb-banner-error')).toHaveCount(0);

  await runCell(cellWith(page, '%sqlnb connect').first());
  await expect(panel.locator('.sqlnb-connections')).not.toHaveValue('', { timeout: 30000 });
  await expect(panel.locator('.sqlnb-schema-table').first()).toBeVisible({ timeout: 30000 });
});

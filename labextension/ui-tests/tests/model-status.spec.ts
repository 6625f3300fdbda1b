/**
 * The panel's line for the local model the Jupyter server shares (GET /sqlnb/model): a
 * server whose configured model is not downloaded says so in the panel with the command
 * that downloads it; a server with no shared model (the tests' own) shows no line.
 */
import { expect, test as playwrightTest } from '@playwright/test';
import * as path from 'path';

import { freePort, IServer, openSidebar, startServer, stopServer } from './launch';
import { DATA_DIR, openPanel, test } from './sqlnb';

test('no shared local model configured: the panel shows no model line', async ({ page }) => {
  const answered = page.waitForResponse(r => r.url().includes('/sqlnb/model'));
  const panel = await openPanel(page);
  const response = await answered;
  expect((await response.json()).state).toBe('none');
  await expect(panel.locator('.sqlnb-banner')).toBeVisible();
  await expect(panel.locator('.sqlnb-model-status')).toHaveCount(0);
});

playwrightTest.describe('a shared model that is not downloaded', () => {
  let server: IServer | undefined;

  playwrightTest.beforeAll(async () => {
    playwrightTest.setTimeout(180000);
    // this checkout's test server, its model folder empty, told to share a model by name
    const port = await freePort();
    server = await startServer(
      'jupyter',
      ['lab', '--config', path.join(__dirname, '..', 'jupyter_server_test_config.py'), '--no-browser'],
      {
        port,
        log: path.join(DATA_DIR, 'model-status-server.log'),
        timeout: 150000,
        env: { SQLNB_UI_PORT: String(port), SQLNB_MODEL: 'llamacpp:qwen2.5-coder-1.5b' }
      }
    );
  });

  playwrightTest.afterAll(async () => {
    await stopServer(server?.process);
  });

  playwrightTest('the panel says the model is missing and how to download it', async ({ page }) => {
    const status = await (await fetch(server!.url('sqlnb/model'))).json();
    expect(status.state).toBe('failed');
    await page.goto(server!.url('lab'));
    const panel = await openSidebar(page);
    const line = panel.locator('.sqlnb-model-status');
    await expect(line).toHaveAttribute('data-state', 'failed');
    await expect(line).toHaveAttribute('role', 'alert');
    await expect(line.locator('.sqlnb-model-text')).toHaveText(
      /^The local model 'qwen2\.5-coder-1\.5b' is not downloaded yet \(looked for .+\)\.$/
    );
    await expect(line.locator('code.sqlnb-model-hint')).toHaveText('sqlnb model download qwen2.5-coder-1.5b');
  });
});

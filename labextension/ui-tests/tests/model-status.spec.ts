/**
 * The panel's line for the local model the Jupyter server shares (GET /sqlnb/model): a
 * server whose configured model is not downloaded says so in the panel with the command
 * that downloads it; a server with no shared model (the tests' own) shows no line; a model
 * that loads shows its clock while it loads, then a moment's "ready".
 */
import { expect, test as playwrightTest } from '@playwright/test';
import { execFileSync } from 'child_process';
import * as path from 'path';

import { freePort, IServer, openSidebar, REPO, startServer, stopServer } from './launch';
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

playwrightTest.describe('a shared model that loads', () => {
  let server: IServer | undefined;
  let stopped = 0; // a model process held (SIGSTOP) while it loads

  playwrightTest.beforeAll(async () => {
    playwrightTest.setTimeout(180000);
    // a real GGUF model (tiny, random weights: tests/tiny_gguf.py) the server shares
    const gguf = path.join(DATA_DIR, 'model-loading', 'tiny.gguf');
    execFileSync(
      'python',
      [
        '-c',
        'import sys; from pathlib import Path; from tests.tiny_gguf import write_tiny_llama; ' +
          'p = Path(sys.argv[1]); p.parent.mkdir(parents=True, exist_ok=True); write_tiny_llama(p)',
        gguf
      ],
      { cwd: REPO }
    );
    const port = await freePort();
    server = await startServer(
      'jupyter',
      ['lab', '--config', path.join(__dirname, '..', 'jupyter_server_test_config.py'), '--no-browser'],
      {
        port,
        log: path.join(DATA_DIR, 'model-loading-server.log'),
        timeout: 150000,
        env: { SQLNB_UI_PORT: String(port), SQLNB_MODEL: `llamacpp:${gguf}` }
      }
    );
  });

  playwrightTest.afterAll(async () => {
    if (stopped) {
      try {
        process.kill(stopped, 'SIGCONT');
      } catch {
        // already gone
      }
    }
    await stopServer(server?.process);
  });

  playwrightTest('the panel shows the model loading with its clock, then ready', async ({ page }) => {
    playwrightTest.setTimeout(180000);
    const status = async () => (await fetch(server!.url('sqlnb/model'))).json();
    await expect.poll(async () => (await status()).state, { timeout: 120000 }).toBe('ready');
    // the model process dies: the server starts it again, and this test holds the new one
    // (SIGSTOP) while it loads, so that the page finds it loading
    const first = await status();
    process.kill(first.pid, 'SIGKILL');
    await expect
      .poll(
        async () => {
          const s = await status();
          if (s.state === 'loading' && s.pid && s.pid !== first.pid) {
            process.kill(s.pid, 'SIGSTOP');
            stopped = s.pid;
          }
          return stopped;
        },
        { timeout: 60000, intervals: [50] }
      )
      .not.toBe(0);
    expect((await status()).state).toBe('loading');

    await page.goto(server!.url('lab'));
    const panel = await openSidebar(page);
    const line = panel.locator('.sqlnb-model-status');
    await expect(line).toHaveAttribute('data-state', 'loading');
    await expect(line).toHaveAttribute('role', 'status');
    const text = line.locator('.sqlnb-model-text');
    await expect(text).toHaveText(/^Loading the local model… \d+ s$/);
    const seconds = async () => Number((await text.textContent())?.match(/(\d+) s$/)?.[1]);
    const before = await seconds();
    await expect.poll(seconds, { timeout: 10000 }).toBeGreaterThan(before); // its clock runs

    process.kill(stopped, 'SIGCONT'); // it goes on loading, and is ready
    stopped = 0;
    await expect(line).toHaveAttribute('data-state', 'ready', { timeout: 60000 });
    await expect(text).toHaveText(/^Local model ready/);
    await expect(line).toHaveCount(0, { timeout: 15000 }); // said for a moment only
    expect((await status()).restarts).toBe(1);
  });
});

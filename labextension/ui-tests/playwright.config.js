/**
 * Playwright configuration for sqlnb's browser tests (Galata against a real JupyterLab).
 *
 * Debian's Chromium (/usr/bin/chromium) drives the page: Playwright's own browsers are
 * never downloaded (PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1). Video is off: Galata's default
 * needs a downloaded ffmpeg.
 *
 * Projects: `ui` (the default: every spec under tests/ but the benchmark) and `bench`
 * (tests/bench/: the event-latency benchmark, `jlpm bench`).
 *
 * Environment: SQLNB_UI_PORT (default 8888) the server's port; SQLNB_UI_REUSE=1 reuses a
 * server already listening there (for local iteration); CHROMIUM overrides the browser.
 */
const path = require('path');
const baseConfig = require('@jupyterlab/galata/lib/playwright-config');

const port = process.env.SQLNB_UI_PORT || '8888';
const baseURL = `http://127.0.0.1:${port}`;
// Everything a run writes is kept apart per port, so two runs on one machine (on
// different SQLNB_UI_PORTs) never delete each other's databases or results.
process.env.SQLNB_UI_DATA = process.env.SQLNB_UI_DATA || path.join(__dirname, '.data', port);

module.exports = {
  ...baseConfig,
  testDir: './tests',
  outputDir: path.join('test-results', port),
  globalSetup: require.resolve('./global-setup.js'),
  // One browser at a time: the tests share one server and a small machine.
  workers: 1,
  fullyParallel: false,
  retries: 0,
  timeout: 120000,
  expect: { timeout: 30000 },
  reporter: [
    [process.env.CI ? 'line' : 'list'],
    ['html', { open: 'never', outputFolder: path.join('playwright-report', port) }]
  ],
  use: {
    ...baseConfig.use,
    baseURL,
    video: 'off',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run'
      ]
    }
  },
  projects: [
    { name: 'ui', testIgnore: /bench\// },
    { name: 'bench', testMatch: /bench\/.*\.spec\.ts/, timeout: 600000 }
  ],
  webServer: {
    // The server's log goes to jupyter-server-PORT.log (kernel tracebacks land there).
    command: `jlpm start > jupyter-server-${port}.log 2>&1`,
    url: `${baseURL}/lab`,
    timeout: 120000,
    reuseExistingServer: process.env.SQLNB_UI_REUSE === '1',
    stdout: 'ignore',
    stderr: 'pipe'
  }
};

/**
 * Servers the newcomer and Binder tests start themselves, the way a person does
 * (`scripts/demo`, `binder/check --serve`), on a free port with a known token; and the
 * page steps they share, done with clicks and keys only (these servers carry no Galata
 * helper extension).
 */
import { expect, Locator, Page } from '@playwright/test';
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';

import { PANEL_ID } from './sqlnb';

export const REPO = path.resolve(__dirname, '..', '..', '..');

/** A port nothing listens on now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

export interface IServer {
  process: ChildProcess;
  port: number;
  token: string;
  log: string;
  url: (p: string) => string;
}

function tail(file: string, lines = 40): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Runs `command args` in the repository (its own process group, output to `log`) and waits
 * until a Jupyter server answers on `port` with `token`; fails with the log's end when the
 * command exits first or `timeout` passes.
 */
export async function startServer(
  command: string,
  args: string[],
  options: { port: number; log: string; env?: Record<string, string>; timeout: number }
): Promise<IServer> {
  const token = `sqlnb-${process.pid}-${Date.now()}`;
  fs.mkdirSync(path.dirname(options.log), { recursive: true });
  const out = fs.openSync(options.log, 'w');
  const child = spawn(command, args, {
    cwd: REPO,
    detached: true,
    stdio: ['ignore', out, out],
    env: { ...process.env, ...options.env, JUPYTER_TOKEN: token }
  });
  fs.closeSync(out);
  let exited: number | null | undefined;
  child.on('exit', code => (exited = code));
  const base = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + options.timeout;
  for (;;) {
    if (exited !== undefined) {
      throw new Error(`${command} exited (${exited}) before the server answered:\n${tail(options.log)}`);
    }
    if (Date.now() > deadline) {
      await stopServer(child);
      throw new Error(
        `no Jupyter server on ${base} after ${options.timeout / 1000} s:\n${tail(options.log)}`
      );
    }
    try {
      const response = await fetch(`${base}/api/status?token=${token}`);
      if (response.ok) {
        break;
      }
    } catch {
      // not listening yet
    }
    await new Promise(r => setTimeout(r, 1000));
  }
  return {
    process: child,
    port: options.port,
    token,
    log: options.log,
    url: (p: string) => `${base}/${p}${p.includes('?') ? '&' : '?'}token=${token}`
  };
}

/** Stops the server's process group (SIGTERM, then SIGKILL after 20 s). */
export async function stopServer(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null || !child.pid) {
    return;
  }
  const done = new Promise(r => child.once('exit', r));
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  }, 20000);
  await done;
  clearTimeout(timer);
}

/** The open notebook's cell whose text contains `text`. */
export function cellWith(page: Page, text: string): Locator {
  return page
    .locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')
    .filter({ hasText: text });
}

/**
 * Waits until the current notebook's kernel is connected and idle, as the status bar says
 * ("Python 3 (ipykernel) | Idle").
 */
export async function kernelIdle(page: Page, timeout = 120000): Promise<void> {
  await expect(page.locator('#jp-main-statusbar').getByText(/\|\s*Idle\s*$/)).toBeVisible({ timeout });
}

/** Runs a code cell in place (click into it, Ctrl+Enter) and waits for its prompt [n]. */
export async function runCell(cell: Locator): Promise<void> {
  await kernelIdle(cell.page());
  await cell.locator('.cm-content').click();
  await expect(cell.locator('.cm-editor.cm-focused')).toBeVisible();
  await cell.page().keyboard.press('Control+Enter');
  await expect(cell.locator('.jp-InputPrompt').first()).toHaveText(/\[\d+\]/, { timeout: 90000 });
}

/** Opens the sqlnb sidebar from its tab and returns its root. */
export async function openSidebar(page: Page): Promise<Locator> {
  const tab = page.locator(`.lm-TabBar-tab[data-id="${PANEL_ID}"]`);
  await expect(tab).toBeVisible({ timeout: 60000 });
  await tab.click();
  const panel = page.locator(`#${PANEL_ID}.sqlnb-panel, #${PANEL_ID} .sqlnb-panel`).first();
  await expect(panel).toBeVisible();
  return panel;
}

/**
 * Helpers shared by sqlnb's browser tests: test databases, scripted models, notebooks
 * created on the server and opened in JupyterLab, and the panel's locators (the DOM
 * contract of the sqlnb sidebar).
 */
import { expect, IJupyterLabPageFixture, test as galataTest } from '@jupyterlab/galata';
import type { APIRequestContext, Locator, Page } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

/** Where global-setup.js built the databases; every test writes its files here too. */
export const DATA_DIR = process.env.SQLNB_UI_DATA as string;

export const PANEL_ID = 'sqlnb-chat-panel';

let serial = 0;

function unique(tag: string): string {
  serial += 1;
  return `${tag.replace(/[^A-Za-z0-9_-]+/g, '-')}-${process.pid}-${serial}`;
}

/**
 * A private copy of the shop database (kinds: duckdb, sqlite): each kernel opens its own
 * file, so two kernels never fight over DuckDB's file lock.
 */
export function dbCopy(kind: 'duckdb' | 'sqlite', tag: string): string {
  const source = path.join(DATA_DIR, `shop.${kind}`);
  const target = path.join(DATA_DIR, `${unique(tag)}.${kind}`);
  fs.copyFileSync(source, target);
  return target;
}

/** A connection URL for a database file (absolute path: four slashes). */
export function dbUrl(kind: 'duckdb' | 'sqlite', file: string): string {
  return `${kind}:///${file}`;
}

/** A fenced SQL reply, as a model writes it. */
export function sqlReply(sql: string): string {
  return '```sql\n' + sql + '\n```';
}

export interface IScript {
  replies: string[];
  drafts?: string[];
  explanations?: string[];
  delay?: number;
  stream_pause?: number;
}

/**
 * SQL (or a cell) on one line, lower case: the panel and the inserted cell lay the SQL out
 * one clause per line in its dialect, so a test compares the words, not the layout.
 */
export function flat(sql: string): string {
  return sql.replace(/\s+/g, ' ').trim().toLowerCase();
}

/** Writes a scripted model file and returns its model spec (`scripted:/abs/path.json`). */
export function scriptedModel(tag: string, script: string[] | IScript): string {
  const file = path.join(DATA_DIR, `${unique(tag)}.model.json`);
  fs.writeFileSync(file, JSON.stringify(script, null, 1));
  return `scripted:${file}`;
}

/**
 * The notebook directory `dir` on disk: the kernel's working directory, where files can be
 * named relatively in cells, as a person would (`duckdb:///shop.duckdb`).
 */
export async function serverDir(page: IJupyterLabPageFixture, dir: string): Promise<string> {
  const root = await page.getServerRoot();
  expect(root).toBeTruthy();
  return path.join(root as string, dir);
}

/** Copies the shop database into `dir` as `name` (relative names in cells). */
export function dbInto(dir: string, kind: 'duckdb' | 'sqlite', name: string): string {
  fs.copyFileSync(path.join(DATA_DIR, `shop.${kind}`), path.join(dir, name));
  return name;
}

/** Writes a scripted model file into `dir`; returns its relative spec (`scripted:NAME`). */
export function modelInto(dir: string, name: string, script: string[] | IScript): string {
  fs.writeFileSync(path.join(dir, name), JSON.stringify(script, null, 1));
  return `scripted:${name}`;
}

/** The cells that connect a kernel: load sqlnb, connect, pick the model. */
export function setupCells(options: {
  connections: { kind: 'duckdb' | 'sqlite'; file: string; name: string }[];
  model?: string;
  load?: boolean;
}): string[] {
  const cells: string[] = [];
  if (options.load !== false) {
    cells.push('%load_ext sqlnb');
  }
  for (const c of options.connections) {
    cells.push(`%sqlnb connect ${dbUrl(c.kind, c.file)} --name ${c.name}`);
  }
  if (options.model) {
    cells.push(`%config AskMagic.model = ${JSON.stringify(options.model)}`);
  }
  return cells;
}

/** nbformat 4 JSON of a Python notebook with these code cells. */
export function notebookJSON(cells: string[]): string {
  return JSON.stringify({
    cells: cells.map((source, i) => ({
      cell_type: 'code',
      execution_count: null,
      id: `cell-${i}`,
      metadata: {},
      outputs: [],
      source
    })),
    metadata: {
      kernelspec: { display_name: 'Python 3 (ipykernel)', language: 'python', name: 'python3' },
      language_info: { name: 'python' }
    },
    nbformat: 4,
    nbformat_minor: 5
  });
}

/**
 * Creates `dir/name` on the server with these cells, opens it in JupyterLab and (unless
 * `run` is false) runs every cell, waiting until each has run. Returns the notebook path.
 */
export async function openNotebook(
  page: IJupyterLabPageFixture,
  dir: string,
  name: string,
  cells: string[],
  options: { run?: boolean } = {}
): Promise<string> {
  const nbPath = `${dir}/${name}`;
  expect(await page.contents.uploadContent(notebookJSON(cells), 'text', nbPath)).toBe(true);
  // Opened by JupyterLab's own command, not through the file browser: galata's openByPath
  // waits for the new file to be listed there, and the listing's refresh can lag behind.
  await page.evaluate(async p => {
    await (window as any).jupyterapp.commands.execute('docmanager:open', { path: p, factory: 'Notebook' });
  }, nbPath);
  await page.waitForFunction(p => !!(window as any).sqlnbTest?.panel(p), nbPath);
  await page.notebook.activate(name);
  await waitForKernelIdle(page, nbPath);
  if (options.run !== false) {
    expect(await page.notebook.run()).toBe(true);
    await expectNoErrorOutputs(page, nbPath);
  }
  return nbPath;
}

/** Waits until the notebook's kernel is started and idle. */
export async function waitForKernelIdle(page: Page, nbPath: string, timeout = 60000): Promise<void> {
  await page.waitForFunction(
    p => {
      const panel = (window as any).sqlnbTest.panel(p);
      const kernel = panel?.sessionContext?.session?.kernel;
      return !!kernel && kernel.status === 'idle' && kernel.connectionStatus === 'connected';
    },
    nbPath,
    { timeout }
  );
}

export interface ICell {
  cell_type: string;
  source: string;
  execution_count: number | null;
  outputs: any[];
  id?: string;
}

/** Registers `window.sqlnbTest`, page-side helpers reading JupyterLab's models. */
export async function installPageHelpers(page: Page): Promise<void> {
  const script = () => {
    const w = window as any;
    w.sqlnbTest = {
      panel(p: string) {
        const app = w.jupyterapp;
        for (const widget of app.shell.widgets('main')) {
          if ((widget as any).context?.path === p) {
            return widget;
          }
        }
        return null;
      },
      notebook(p: string) {
        const panel = w.sqlnbTest.panel(p);
        return panel ? panel.context.model.toJSON() : null;
      }
    };
  };
  await page.addInitScript(script);
  await page.evaluate(script);
}

/** The notebook's cells as JupyterLab holds them (unsaved changes included). */
export async function cells(page: Page, nbPath: string): Promise<ICell[]> {
  return page.evaluate(p => {
    const nb = (window as any).sqlnbTest.notebook(p);
    if (!nb) {
      throw new Error(`notebook ${p} is not open`);
    }
    return nb.cells.map((c: any) => ({
      cell_type: c.cell_type,
      source: Array.isArray(c.source) ? c.source.join('') : c.source,
      execution_count: c.execution_count ?? null,
      outputs: c.outputs ?? [],
      id: c.id
    }));
  }, nbPath);
}

/** The notebook's metadata as JupyterLab holds it. */
export async function notebookMetadata(page: Page, nbPath: string): Promise<any> {
  return page.evaluate(p => (window as any).sqlnbTest.notebook(p)?.metadata ?? null, nbPath);
}

/** The notebook as saved on the server. */
export async function savedNotebook(request: APIRequestContext, nbPath: string): Promise<any> {
  const response = await request.get(`/api/contents/${nbPath}?content=1&type=notebook`);
  expect(response.ok()).toBe(true);
  return (await response.json()).content;
}

/** Fails when a cell of the notebook shows an error output (a setup cell that broke). */
export async function expectNoErrorOutputs(page: Page, nbPath: string): Promise<void> {
  const errors = (await cells(page, nbPath)).flatMap((c, i) =>
    c.outputs
      .filter(o => o.output_type === 'error' || (o.output_type === 'stream' && o.name === 'stderr'))
      .map(o => `cell ${i} (${c.source.split('\n')[0]}): ${o.ename ?? ''} ${o.evalue ?? o.text ?? ''}`)
  );
  expect(errors).toEqual([]);
}

/** Text of every output of a cell, HTML stripped (what a reader sees). */
export function outputText(cell: ICell): string {
  return cell.outputs
    .map(o => {
      if (o.text) {
        return Array.isArray(o.text) ? o.text.join('') : o.text;
      }
      const data = o.data ?? {};
      const html = data['text/html'];
      if (html) {
        return (Array.isArray(html) ? html.join('') : html).replace(/<[^>]+>/g, ' ');
      }
      const plain = data['text/plain'];
      return plain ? (Array.isArray(plain) ? plain.join('') : plain) : '';
    })
    .join('\n');
}

/** Galata's test with the page helpers installed (also after a reload). */
export const test = galataTest.extend({
  page: async ({ page }, use) => {
    await installPageHelpers(page);
    await use(page);
  }
});

export { expect };

// ---- the panel --------------------------------------------------------------------------

/** Opens the sqlnb sidebar and returns its root. */
export async function openPanel(page: IJupyterLabPageFixture): Promise<Locator> {
  await page.sidebar.openTab(PANEL_ID);
  const panel = page.locator(`#${PANEL_ID}.sqlnb-panel, #${PANEL_ID} .sqlnb-panel`).first();
  await expect(panel).toBeVisible();
  return panel;
}

/** Types a question into the panel and sends it with Enter. */
export async function ask(panel: Locator, question: string): Promise<void> {
  const input = panel.locator('.sqlnb-question-input');
  await expect(input).toBeEnabled();
  await input.fill(question);
  await input.press('Enter');
}

/** The panel's turn for a question (the last one when asked twice). */
export function turn(panel: Locator, question: string): Locator {
  return panel
    .locator('.sqlnb-turn')
    .filter({ has: panel.page().locator('.sqlnb-user-question', { hasText: question }) })
    .last();
}

/** Waits until the turn has a final status and returns it. */
export async function finalStatus(t: Locator, timeout = 60000): Promise<string> {
  await expect(t).toHaveAttribute('data-status', /^(success|failed|needs_clarification|stopped|error)$/, {
    timeout
  });
  return (await t.getAttribute('data-status')) as string;
}

/** The rows of a result table (header row excluded), as text. */
export async function tableRows(table: Locator): Promise<string[][]> {
  return table.evaluate((t: HTMLTableElement) =>
    Array.from(t.querySelectorAll('tbody tr')).map(tr =>
      Array.from(tr.querySelectorAll('td, th')).map(td => (td.textContent ?? '').trim())
    )
  );
}

/** Index of the active cell of the current notebook. */
export async function activeCellIndex(page: Page, nbPath: string): Promise<number> {
  return page.evaluate(p => (window as any).sqlnbTest.panel(p).content.activeCellIndex, nbPath);
}

/** Makes cell `index` of the notebook the active cell. */
export async function setActiveCell(page: Page, nbPath: string, index: number): Promise<void> {
  await page.evaluate(
    ([p, i]) => {
      (window as any).sqlnbTest.panel(p).content.activeCellIndex = i;
    },
    [nbPath, index] as [string, number]
  );
}

/** Runs cell `index` in place (Ctrl+Enter: no new cell below) and waits until it ran. */
export async function runCellInPlace(page: IJupyterLabPageFixture, index: number): Promise<void> {
  expect(await page.notebook.runCell(index, { inplace: true })).toBe(true);
}

/** Appends a code cell with this source to the notebook's model (no typing). */
export async function appendCell(page: Page, nbPath: string, source: string): Promise<number> {
  return page.evaluate(
    ([p, src]) => {
      const panel = (window as any).sqlnbTest.panel(p);
      const shared = panel.content.model.sharedModel;
      shared.insertCell(shared.cells.length, { cell_type: 'code', source: src });
      return shared.cells.length - 1;
    },
    [nbPath, source] as [string, string]
  );
}

/**
 * Saves a screenshot of the page: into docs/images/NAME when SQLNB_UI_SCREENSHOTS is set
 * (refreshing the documentation's images), else beside the test's results.
 */
export async function screenshot(page: Page, name: string, outputPath: (n: string) => string) {
  const target = process.env.SQLNB_UI_SCREENSHOTS
    ? path.resolve(__dirname, '..', '..', '..', 'docs', 'images', name)
    : outputPath(name);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  await page.screenshot({ path: target });
  return target;
}

/**
 * NotebookChat's signals: which one fires for which event (the panel's parts each follow
 * their own), and that a phase or text event of the model writing fires the live line's
 * alone. Against a fake notebook and the fake kernel of the bridge's tests.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kernel } from '@jupyterlab/services';
import { Signal } from '@lumino/signaling';
import { KernelBridge } from '../src/bridge';
import { DEFAULT_SETTINGS, ICellPlace, IChatOwner, INotebookHost, NotebookChat } from '../src/chat';
import { FakeKernel, settle } from './fakes';

class FakeNotebook implements INotebookHost {
  constructor(readonly fakeKernel: FakeKernel) {}
  path = 'work/orders.ipynb';
  isDisposed = false;
  kernelDisplayStatus = 'idle';
  metadata: Record<string, unknown> | undefined = undefined;
  inserted: { source: string; run: boolean; where: ICellPlace }[] = [];
  pathChanged = new Signal<this, void>(this);
  kernelChanged = new Signal<this, void>(this);
  statusChanged = new Signal<this, void>(this);
  cellExecuted = new Signal<this, string>(this);
  contextReady = Promise.resolve();
  sessionReady = Promise.resolve();

  get kernel(): Kernel.IKernelConnection {
    return this.fakeKernel as unknown as Kernel.IKernelConnection;
  }

  getMetadata(): Record<string, unknown> | undefined {
    return this.metadata;
  }

  setMetadata(value: Record<string, unknown>): void {
    this.metadata = value;
  }

  async insertCell(source: string, run: boolean, where: ICellPlace): Promise<boolean> {
    this.inserted.push({ source, run, where });
    return true;
  }
}

class FakeOwner implements IChatOwner {
  settings = { ...DEFAULT_SETTINGS };
  runs = new Map<string, NotebookChat>();
  bridgeFor(kernel: Kernel.IKernelConnection, path: () => string): KernelBridge {
    const bridge = new KernelBridge(kernel, path);
    // run events to the chat that asked (SqlnbModel routes them so)
    bridge.runEvent.connect((_, args) => this.runs.get(args.run)?.handleEvent(args.run, args.event));
    return bridge;
  }
  registerRun(run: string, chat: NotebookChat): void {
    this.runs.set(run, chat);
  }
  forgetRun(run: string): void {
    this.runs.delete(run);
  }
  flushRun(): void {
    // no events arrive before the ask's reply here
  }
}

const SIGNALS = [
  'titleChanged',
  'bannerChanged',
  'connectionsChanged',
  'schemaChanged',
  'turnAdded',
  'turnUpdated',
  'turnsReset',
  'liveChanged',
  'busyChanged',
  'statsChanged'
] as const;

/** The names of the chat's signals as they fire, in order. */
function record(chat: NotebookChat): string[] {
  const fired: string[] = [];
  for (const name of SIGNALS) {
    (chat[name] as Signal<NotebookChat, unknown>).connect(() => fired.push(name));
  }
  return fired;
}

/** A chat on a kernel with sqlnb and one connection, shown in the panel, its tables read. */
async function shownChat(): Promise<{ chat: NotebookChat; kernel: FakeKernel; notebook: FakeNotebook }> {
  const kernel = new FakeKernel();
  kernel.targetRegistered = true;
  kernel.askEvents = [];
  const notebook = new FakeNotebook(kernel);
  const chat = new NotebookChat(notebook, new FakeOwner());
  await settle();
  chat.activate();
  await settle();
  assert.equal(chat.isReady, true);
  assert.equal(chat.active, 'shop');
  assert.deepEqual(
    chat.schema?.tables.map(t => t.name),
    ['orders']
  );
  return { chat, kernel, notebook };
}

/** Ask a question and let its run be known; the events fired meanwhile. */
async function asked(chat: NotebookChat, question = 'How many orders?'): Promise<string[]> {
  const fired = record(chat);
  await chat.ask(question);
  await settle();
  return fired;
}

test('the kernel becoming ready fires the connections, the status line and the tables', async () => {
  const kernel = new FakeKernel();
  kernel.targetRegistered = true;
  const chat = new NotebookChat(new FakeNotebook(kernel), new FakeOwner());
  const fired = record(chat);
  await settle();
  chat.activate();
  await settle();
  assert.ok(fired.includes('connectionsChanged'));
  assert.ok(fired.includes('bannerChanged'));
  assert.ok(fired.includes('schemaChanged'));
  for (const none of [
    'turnAdded',
    'turnUpdated',
    'turnsReset',
    'liveChanged',
    'busyChanged',
    'statsChanged'
  ]) {
    assert.ok(!fired.includes(none), none);
  }
  assert.equal(chat.banner.text, 'Connected: shop');
});

test('asking adds a turn and makes the chat busy; the run bound to it updates the turn', async () => {
  const { chat } = await shownChat();
  const fired = await asked(chat);
  assert.deepEqual(fired, ['turnAdded', 'busyChanged', 'turnUpdated', 'busyChanged']);
  assert.equal(chat.running?.run, 'r1');
  assert.equal(chat.turns.length, 1);
});

test("a phase or text event fires the live line's signal and no other", async () => {
  const { chat, kernel } = await shownChat();
  await asked(chat);
  const fired = record(chat);
  const turns: string[] = [];
  chat.liveChanged.connect((_, turn) => turns.push(turn.live?.text ?? ''));
  kernel.event('r1', { type: 'phase', phase: 'writing', call: 1, label: 'Writing a query…' });
  kernel.event('r1', { type: 'text', call: 1, offset: 0, text: 'The orders table' });
  kernel.event('r1', { type: 'text', call: 1, offset: 16, text: ' has one row per order' });
  await settle();
  assert.deepEqual(fired, ['liveChanged', 'liveChanged', 'liveChanged']);
  assert.deepEqual(turns, ['', 'The orders table', 'The orders table has one row per order']);
  assert.equal(chat.running?.live?.label, 'Writing a query…');
});

test('a step updates its turn and nothing else; the end of the run also ends busy and counts', async () => {
  const { chat, kernel, notebook } = await shownChat();
  await asked(chat);
  let fired = record(chat);
  kernel.event('r1', { type: 'attempt', n: 1, ok: true, sql: 'SELECT count(*) FROM orders', row_count: 1 });
  await settle();
  assert.deepEqual(fired, ['turnUpdated']);

  fired = record(chat);
  kernel.event('r1', {
    type: 'done',
    status: 'success',
    sql: 'SELECT count(*) FROM orders',
    cell: '%%sql --conn shop\nSELECT count(*) FROM orders\n',
    columns: ['n'],
    rows: [[7]],
    row_count: 1,
    stats_label: '1 question answered · 1 attempt'
  });
  await settle();
  // the connections asked again after a success are the same: nothing more fires
  assert.deepEqual(fired, ['turnUpdated', 'busyChanged', 'statsChanged']);
  assert.equal(chat.running, null);
  assert.equal(chat.stats, '1 question answered · 1 attempt');
  assert.equal(chat.turns[0].status, 'success');
  // the finished turn is saved with the notebook
  const saved = (notebook.metadata?.chat as { turns: { status: string }[] }).turns;
  assert.deepEqual(
    saved.map(t => t.status),
    ['success']
  );
});

test('the question a follow-up was answered as comes with the done event and is saved', async () => {
  const { chat, kernel, notebook } = await shownChat();
  await asked(chat, 'And last month?');
  kernel.event('r1', {
    type: 'done',
    status: 'success',
    sql: 'SELECT 1',
    cell: '%%sql\nSELECT 1\n',
    answered_as: 'How many orders were placed last month?'
  });
  await settle();
  assert.equal(chat.turns[0].answeredAs, 'How many orders were placed last month?');
  const saved = (notebook.metadata?.chat as { turns: { answeredAs?: string }[] }).turns;
  assert.equal(saved[0].answeredAs, 'How many orders were placed last month?');
});

test('switching connection fires the connections, the status line and the tables', async () => {
  const { chat, kernel } = await shownChat();
  kernel.connections = [...kernel.connections, { name: 'lite', engine: 'SQLite', url: 'sqlite:///y' }];
  await chat.refreshConnections();
  const fired = record(chat);
  await chat.useConnection('lite');
  await settle();
  assert.equal(chat.active, 'lite');
  assert.deepEqual([...new Set(fired)].sort(), ['bannerChanged', 'connectionsChanged', 'schemaChanged']);
  assert.equal(chat.banner.text, 'Connected: lite');
});

test('a new conversation resets the turns; a renamed notebook fires its title only', async () => {
  const { chat, kernel, notebook } = await shownChat();
  await asked(chat, 'One?');
  kernel.event('r1', { type: 'done', status: 'success', sql: 'SELECT 1', cell: '%%sql\nSELECT 1\n' });
  await settle();
  let fired = record(chat);
  chat.clear();
  assert.deepEqual(fired, ['turnsReset']);
  assert.equal(chat.turns.length, 0);

  fired = record(chat);
  notebook.path = 'work/renamed.ipynb';
  notebook.pathChanged.emit();
  assert.deepEqual(fired, ['titleChanged']);
  assert.equal(chat.title, 'renamed.ipynb');
});

test('a notice (an error the user caused) fires the status line only', async () => {
  const { chat } = await shownChat();
  const fired = record(chat);
  chat.setNotice({ text: 'Something went wrong.', error: true });
  assert.deepEqual(fired, ['bannerChanged']);
  assert.equal(chat.banner.text, 'Something went wrong.');
  chat.setNotice(null);
  assert.equal(chat.banner.text, 'Connected: shop');
});

test('a question that did not start leaves nothing behind and is not busy', async () => {
  const { chat, kernel } = await shownChat();
  kernel.refuse.add('ask');
  const fired = record(chat);
  await assert.rejects(chat.ask('Lost?'), /refused/);
  assert.equal(chat.turns.length, 0);
  assert.equal(chat.running, null);
  assert.deepEqual(fired.slice(0, 2), ['turnAdded', 'busyChanged']);
  assert.ok(fired.includes('turnsReset'));
  assert.equal(fired[fired.length - 1], 'busyChanged');
});

/**
 * KernelBridge against a fake kernel connection: opening, the silent
 * %load_ext when the comm target is missing, errors people can act on,
 * takeover by another panel, restarts, and the probe of a hidden panel.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kernel } from '@jupyterlab/services';
import { KernelBridge } from '../src/bridge';
import { FakeKernel, settle } from './fakes';

function bridgeOf(kernel: FakeKernel): KernelBridge {
  // the fake has the members the bridge uses, not the whole kernel connection
  return new KernelBridge(kernel as unknown as Kernel.IKernelConnection, () => 'work/nb.ipynb');
}

test('a kernel with sqlnb loaded: hello, connections, no code run', async () => {
  const kernel = new FakeKernel();
  kernel.targetRegistered = true;
  const bridge = bridgeOf(kernel);
  await bridge.open();
  assert.equal(bridge.state, 'ready');
  assert.equal(bridge.hello?.active, 'shop');
  assert.deepEqual(kernel.executed, []);
  const hello = kernel.comms[0].sent[0];
  assert.equal(hello.type, 'hello');
  assert.equal(hello.v, 1);
  assert.equal(hello.protocol, 1);
  assert.equal(hello.notebook, 'work/nb.ipynb');
});

test('target missing: sqlnb is loaded silently, without history, then hello again', async () => {
  const kernel = new FakeKernel();
  const bridge = bridgeOf(kernel);
  const states: string[] = [];
  bridge.stateChanged.connect((_, s) => states.push(s));
  await bridge.open();
  assert.equal(bridge.state, 'ready');
  assert.equal(kernel.executed.length, 1);
  assert.deepEqual(
    {
      code: kernel.executed[0].code,
      silent: kernel.executed[0].silent,
      store_history: kernel.executed[0].store_history
    },
    { code: "__import__('sqlnb').load_ipython_extension(get_ipython())", silent: true, store_history: false }
  );
  assert.equal(kernel.comms.length, 2);
  assert.deepEqual(states, ['connecting', 'loading', 'ready']);
});

test('sqlnb not installed in the kernel: the panel names %pip install sqlnb', async () => {
  const kernel = new FakeKernel();
  kernel.loadError = 'ModuleNotFoundError';
  const bridge = bridgeOf(kernel);
  await bridge.open();
  assert.equal(bridge.state, 'not_installed');
  assert.match(
    bridge.message?.message ?? '',
    /not installed in this kernel's environment: run %pip install sqlnb/
  );
  // a request says the same, without opening again
  await assert.rejects(bridge.request('connections'), /%pip install sqlnb/);
  assert.equal(kernel.executed.length, 1);
});

test('comms disabled on this connection: said plainly', async () => {
  const kernel = new FakeKernel();
  kernel.commsDisabled = true;
  const bridge = bridgeOf(kernel);
  await bridge.open();
  assert.equal(bridge.state, 'no_comms');
  assert.match(bridge.message?.message ?? '', /cannot open comms/);
});

test('a kernel speaking another protocol version', async () => {
  const kernel = new FakeKernel();
  kernel.targetRegistered = true;
  kernel.protocol = 2;
  const bridge = bridgeOf(kernel);
  await bridge.open();
  assert.equal(bridge.state, 'mismatch');
  assert.match(bridge.message?.hint ?? '', /same sqlnb version/);
});

test('a non-Python kernel is not sent anything', async () => {
  const kernel = new FakeKernel();
  kernel.info = Promise.resolve({ language_info: { name: 'R' } });
  const bridge = bridgeOf(kernel);
  await bridge.open();
  assert.equal(bridge.state, 'not_python');
  assert.equal(kernel.comms.length, 0);
});

test('another panel takes the kernel over; Use here takes it back', async () => {
  const kernel = new FakeKernel();
  kernel.targetRegistered = true;
  const a = bridgeOf(kernel);
  const b = bridgeOf(kernel);
  await a.open();
  await b.open();
  await settle();
  assert.equal(a.state, 'superseded');
  assert.match(a.message?.message ?? '', /active in another browser tab/);
  assert.equal(b.state, 'ready');
  await assert.rejects(a.request('connections'), /another browser tab/);
  await a.open(true);
  await settle();
  assert.equal(a.state, 'ready');
  assert.equal(b.state, 'superseded');
});

test('a restart drops the comm, fails waiting requests and reloads sqlnb where it was in use', async () => {
  const kernel = new FakeKernel();
  const bridge = bridgeOf(kernel);
  await bridge.open();
  assert.equal(kernel.executed.length, 1);
  kernel.restart();
  await settle();
  assert.equal(bridge.state, 'ready');
  assert.equal(kernel.executed.length, 2, 'sqlnb was loaded again after the restart');
});

test('a hidden panel only probes: nothing runs in a kernel without sqlnb', async () => {
  const kernel = new FakeKernel();
  const bridge = bridgeOf(kernel);
  await bridge.probe();
  assert.equal(bridge.state, 'absent');
  assert.deepEqual(kernel.executed, []);
  // a restart of a kernel the panel never used loads nothing either
  kernel.restart();
  await settle();
  assert.equal(bridge.state, 'absent');
  assert.deepEqual(kernel.executed, []);
  // asking (or showing the panel) loads it
  const reply = await bridge.request('ask', { question: 'q' });
  assert.deepEqual(reply, { run: 'r1' });
  assert.equal(kernel.executed.length, 1);
});

test('run events reach listeners; a dead kernel says what to do', async () => {
  const kernel = new FakeKernel();
  kernel.targetRegistered = true;
  const bridge = bridgeOf(kernel);
  const events: string[] = [];
  bridge.runEvent.connect((_, e) => events.push(`${e.run}:${e.event.type}`));
  await bridge.request('ask', { question: 'q' });
  await settle();
  assert.deepEqual(events, ['r1:done']);
  kernel.statusChanged.emit('dead');
  assert.equal(bridge.state, 'dead');
  assert.match(bridge.message?.hint ?? '', /Restart/);
});

/**
 * A fake kernel connection with sqlnb's comm in it (what KernelBridge uses of one), for the
 * bridge's and the chat model's tests.
 */
import assert from 'node:assert/strict';
import { Signal } from '@lumino/signaling';

export type Data = Record<string, unknown>;

export class FakeComm {
  constructor(readonly kernel: FakeKernel) {}
  onMsg: (msg: unknown) => void = () => undefined;
  onClose: (msg: unknown) => void = () => undefined;
  isDisposed = false;
  closed = false;
  sent: Data[] = [];

  open(): void {
    if (!this.kernel.targetRegistered) {
      // ipykernel closes a comm whose target does not exist
      setImmediate(() => this.kernelClose());
    }
  }

  send(data: Data): void {
    if (this.closed) {
      throw new Error('Comm is closed');
    }
    this.sent.push(data);
    setImmediate(() => this.kernel.answer(this, data));
  }

  close(): void {
    this.closed = true;
  }

  dispose(): void {
    this.isDisposed = true;
  }

  /** the kernel closes the comm */
  kernelClose(): void {
    if (!this.closed) {
      this.closed = true;
      this.onClose({});
    }
  }

  receive(data: Data): void {
    this.onMsg({ content: { data } });
  }
}

export class FakeKernel {
  id = 'k1';
  isDisposed = false;
  statusChanged = new Signal<this, string>(this);
  disposed = new Signal<this, void>(this);
  info: Promise<{ language_info: { name: string } }> = Promise.resolve({ language_info: { name: 'python' } });
  targetRegistered = false;
  /** what `%load_ext sqlnb` does: register the target, or fail with this ename */
  loadError: string | null = null;
  commsDisabled = false;
  protocol = 1;
  comms: FakeComm[] = [];
  executed: Data[] = [];
  panel: FakeComm | null = null;

  createComm(target: string): FakeComm {
    assert.equal(target, 'sqlnb');
    if (this.commsDisabled) {
      throw new Error('Comms are disabled on this kernel connection');
    }
    const comm = new FakeComm(this);
    this.comms.push(comm);
    return comm;
  }

  requestExecute(content: Data): { done: Promise<unknown> } {
    this.executed.push(content);
    if (this.loadError) {
      return {
        done: Promise.resolve({
          content: { status: 'error', ename: this.loadError, evalue: "No module named 'sqlnb'" }
        })
      };
    }
    this.targetRegistered = true;
    return { done: Promise.resolve({ content: { status: 'ok' } }) };
  }

  /** the kernel's connections (hello, connections, use) */
  connections: Data[] = [{ name: 'shop', engine: 'DuckDB', url: 'duckdb:///x' }];
  active: string | null = 'shop';
  /** the events an ask's run sends at once (a test sends the rest with `event`) */
  askEvents: Data[] = [{ type: 'done', status: 'success' }];
  /** the requests the panel sent, by type */
  requests: Data[] = [];
  /** request types answered with an error */
  refuse = new Set<string>();

  answer(comm: FakeComm, data: Data): void {
    this.requests.push(data);
    const reply = (payload: Data) =>
      comm.receive({ v: 1, type: 'reply', id: data.id, ok: true, data: payload });
    const connections = () => ({ connections: this.connections, active: this.active });
    if (this.refuse.has(String(data.type))) {
      comm.receive({
        v: 1,
        type: 'reply',
        id: data.id,
        ok: false,
        error: { kind: 'error', message: 'refused' }
      });
    } else if (data.type === 'hello') {
      const old = this.panel;
      this.panel = comm;
      if (old && old !== comm) {
        old.receive({ v: 1, type: 'superseded' });
        old.kernelClose();
      }
      reply({ protocol: this.protocol, sqlnb: '0.1.0', ...connections() });
    } else if (data.type === 'ask') {
      reply({ run: 'r1' });
      for (const event of this.askEvents) {
        this.event('r1', event);
      }
    } else if (data.type === 'connections') {
      reply(connections());
    } else if (data.type === 'use') {
      this.active = String(data.name);
      reply(connections());
    } else if (data.type === 'schema') {
      reply({ connection: data.connection, tables: [{ name: 'orders', columns: [] }] });
    } else {
      reply({});
    }
  }

  /** A run event on the panel's comm. */
  event(run: string, event: Data): void {
    this.panel?.receive({ v: 1, type: 'event', run, event });
  }

  /** a restart: comms go away, the target with them */
  restart(): void {
    this.targetRegistered = false;
    this.panel = null;
    this.statusChanged.emit('restarting');
    this.statusChanged.emit('starting');
    this.statusChanged.emit('idle');
  }
}

/** Let the fake kernel's replies (sent with setImmediate) arrive. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) {
    await new Promise(r => setImmediate(r));
  }
}

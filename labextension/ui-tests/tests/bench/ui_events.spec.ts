/**
 * Benchmark (not part of the default run: `jlpm bench`, or benchmarks/ui_events.py):
 * the time from the kernel sending a run's step event on the panel's comm to the panel
 * showing it as a `.sqlnb-step`.
 *
 * - Kernel side: a cell wraps ipykernel's comm `publish_msg` to note `time.time()` (ms)
 *   just before each `event` message goes out (type and run id).
 * - Page side: a MutationObserver on the panel notes `performance.timeOrigin +
 *   performance.now()` when each step of each turn first appears in the DOM, and again at
 *   the next animation frame (about when it is painted).
 * - The page also notes when each event's message arrives on the kernel's WebSocket, which
 *   splits the time into transport (kernel → server → page) and the panel's own handling.
 * - Both clocks are this machine's wall clock. A question's events (`started`, `reply`,
 *   `attempt`, `reply`) each add one step to its turn, in order: the n-th event of the
 *   k-th run is the n-th step of the k-th turn.
 *
 * SQLNB_BENCH_QUESTIONS (default 20: 80 events) questions are asked one after another; a
 * scripted model answering after SQLNB_BENCH_DELAY seconds (default 0.2) spaces the
 * events as a real model would. The raw measurements go to SQLNB_BENCH_OUT (JSON).
 */
import * as fs from 'fs';
import {
  appendCell,
  ask,
  cells,
  dbCopy,
  expect,
  finalStatus,
  openNotebook,
  openPanel,
  outputText,
  runCellInPlace,
  scriptedModel,
  setupCells,
  sqlReply,
  test,
  turn
} from '../sqlnb';

const QUESTIONS = Number(process.env.SQLNB_BENCH_QUESTIONS || 20);
const DELAY = Number(process.env.SQLNB_BENCH_DELAY || 0.2);

const TIMING_CELL = `
import time as _sqlnb_time
from ipykernel.comm.comm import BaseComm as _SqlnbBaseComm
_sqlnb_sent = []
if not getattr(_SqlnbBaseComm, "_sqlnb_timed", False):
    _sqlnb_publish = _SqlnbBaseComm.publish_msg
    def _sqlnb_timed_publish(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        if msg_type == "comm_msg" and isinstance(data, dict) and data.get("type") == "event":
            event = data.get("event") or {}
            _sqlnb_sent.append([_sqlnb_time.time() * 1000.0, event.get("type"), data.get("run")])
        return _sqlnb_publish(self, msg_type, data, metadata, buffers, **keys)
    _SqlnbBaseComm.publish_msg = _sqlnb_timed_publish
    _SqlnbBaseComm._sqlnb_timed = True
import re as _sqlnb_re
from ipykernel.iostream import IOPubThread as _SqlnbIOPub
_sqlnb_flushed = []
if not getattr(_SqlnbIOPub, "_sqlnb_timed", False):
    _sqlnb_really_send = _SqlnbIOPub._really_send
    def _sqlnb_timed_send(self, msg, *args, **kwargs):
        for frame in msg or []:
            raw = bytes(frame) if isinstance(frame, (bytes, bytearray, memoryview)) else b""
            if b'"event"' in raw:
                run = _sqlnb_re.search(rb'"run":\\s*"([^"]+)"', raw)
                kind = _sqlnb_re.search(rb'"event":\\s*\\{\\s*"type":\\s*"(\\w+)"', raw)
                if run and kind:
                    _sqlnb_flushed.append([_sqlnb_time.time() * 1000.0, kind.group(1).decode(), run.group(1).decode()])
        return _sqlnb_really_send(self, msg, *args, **kwargs)
    _SqlnbIOPub._really_send = _sqlnb_timed_send
    _SqlnbIOPub._sqlnb_timed = True
`.trim();

test('kernel event to panel step latency', async ({ page, tmpPath }, testInfo) => {
  test.setTimeout(600000);
  const replies: string[] = [];
  for (let i = 0; i < QUESTIONS; i++) {
    replies.push(sqlReply(`SELECT count(*) + ${i} AS n FROM orders`), 'FINAL');
  }
  const model = scriptedModel('bench', { replies, delay: DELAY });
  // Page side, before the kernel's socket opens: when each run event's message arrives
  // (a 'message' listener added in the socket's constructor runs before JupyterLab's).
  await page.addInitScript(() => {
    const w = window as any;
    w.sqlnbArrivals = [] as any[];
    const Native = window.WebSocket;
    const decoder = new TextDecoder();
    class TimedWebSocket extends Native {
      constructor(url: string | URL, protocols?: string | string[]) {
        super(url, protocols);
        this.addEventListener('message', (e: MessageEvent) => {
          const t = performance.timeOrigin + performance.now();
          const text = typeof e.data === 'string' ? e.data : decoder.decode(e.data as ArrayBuffer);
          if (!text.includes('"event"')) {
            return;
          }
          const run = /"run":\s*"([^"]+)"/.exec(text);
          const kind = /"event":\s*\{\s*"type":\s*"(\w+)"/.exec(text);
          if (run && kind) {
            w.sqlnbArrivals.push({ run: run[1], type: kind[1], t });
          }
        });
      }
    }
    (window as any).WebSocket = TimedWebSocket;
  });
  await page.reload(); // no notebook open yet: the Launcher comes back
  const nb = await openNotebook(page, tmpPath, 'bench.ipynb', [
    ...setupCells({
      connections: [{ kind: 'duckdb', file: dbCopy('duckdb', 'bench'), name: 'shop' }],
      model
    }),
    TIMING_CELL
  ]);
  const panel = await openPanel(page);
  await expect(panel.locator('.sqlnb-connections')).toHaveValue('shop');

  // Page side: the first time each step of each turn shows.
  await page.evaluate(() => {
    const w = window as any;
    const seen = new Map<string, number>();
    w.sqlnbSteps = [] as any[];
    const now = () => performance.timeOrigin + performance.now();
    const root = document.querySelector('#sqlnb-chat-panel') as HTMLElement;
    const scan = () => {
      const t = now();
      const fresh: any[] = [];
      root.querySelectorAll('.sqlnb-turn[data-turn]').forEach(node => {
        const id = (node as HTMLElement).dataset.turn as string;
        const steps = node.querySelectorAll('.sqlnb-step');
        const known = seen.get(id) ?? 0;
        for (let i = known; i < steps.length; i++) {
          const rec = { turn: id, index: i, kind: (steps[i] as HTMLElement).dataset.kind, dom: t, frame: 0 };
          w.sqlnbSteps.push(rec);
          fresh.push(rec);
        }
        if (steps.length > known) {
          seen.set(id, steps.length);
        }
      });
      if (fresh.length) {
        requestAnimationFrame(() => {
          const f = now();
          fresh.forEach(r => (r.frame = f));
        });
      }
    };
    new MutationObserver(scan).observe(root, { childList: true, subtree: true });
  });

  const turnIds: string[] = [];
  for (let i = 0; i < QUESTIONS; i++) {
    const q = `Question ${i + 1}: how many orders, plus ${i}?`;
    await ask(panel, q);
    const t = turn(panel, q);
    expect(await finalStatus(t)).toBe('success');
    turnIds.push((await t.getAttribute('data-turn')) as string);
  }
  const steps: any[] = await page.evaluate(() => (window as any).sqlnbSteps);
  const arrivals: any[] = await page.evaluate(() => (window as any).sqlnbArrivals);
  const clockSkew = await page.evaluate(() => Date.now() - (performance.timeOrigin + performance.now()));

  // Kernel side: what was sent, read back through a cell.
  const dump = await appendCell(page, nb, 'import json; print(json.dumps(_sqlnb_sent))');
  await runCellInPlace(page, dump);
  const sent: [number, string, string][] = JSON.parse(outputText((await cells(page, nb))[dump]).trim());
  // when the kernel's IOPub thread put each event on its socket
  const flushCell = await appendCell(page, nb, 'print(json.dumps(_sqlnb_flushed))');
  await runCellInPlace(page, flushCell);
  const flushed: [number, string, string][] = JSON.parse(
    outputText((await cells(page, nb))[flushCell]).trim()
  );

  const runs: string[] = [];
  for (const [, , run] of sent) {
    if (!runs.includes(run)) {
      runs.push(run);
    }
  }
  expect(runs).toHaveLength(QUESTIONS);
  // the steps; `done`, and the live line's `phase` and `text`, are not steps
  const isStep = (type: string) => !['done', 'phase', 'text'].includes(type);
  const events: any[] = [];
  runs.forEach((run, k) => {
    const kernel = sent.filter(s => s[2] === run && isStep(s[1]));
    const shown = steps.filter(s => s.turn === turnIds[k]).sort((a, b) => a.index - b.index);
    expect(shown.map(s => s.kind)).toEqual(kernel.map(e => (e[1] === 'started' ? 'note' : e[1])));
    const arrived = arrivals.filter(a => a.run === run && isStep(a.type));
    const out = flushed.filter(f => f[2] === run && isStep(f[1]));
    expect(arrived.map(a => a.type)).toEqual(kernel.map(e => e[1]));
    kernel.forEach((e, n) => {
      events.push({
        arrived_ms: arrived[n].t,
        transport_ms: arrived[n].t - e[0],
        // of the transport: waiting in the kernel for its IOPub thread to send
        kernel_queue_ms: out[n] && out[n][1] === e[1] ? out[n][0] - e[0] : null,
        panel_ms: shown[n].dom - arrived[n].t,
        question: k + 1,
        index: n,
        type: e[1],
        kernel_ms: e[0],
        dom_ms: shown[n].dom,
        frame_ms: shown[n].frame,
        latency_ms: shown[n].dom - e[0],
        frame_latency_ms: shown[n].frame - e[0]
      });
    });
  });
  expect(events.length).toBe(sent.filter(s => isStep(s[1])).length);
  const out = process.env.SQLNB_BENCH_OUT || testInfo.outputPath('ui_events.raw.json');
  fs.writeFileSync(
    out,
    JSON.stringify(
      {
        questions: QUESTIONS,
        model_delay_s: DELAY,
        browser: page.context().browser()?.version(),
        clock_skew_ms: clockSkew,
        events
      },
      null,
      1
    )
  );
  console.log(`ui_events: ${events.length} events written to ${out}`);
});

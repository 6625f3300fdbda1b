/**
 * One question and what came of it: the question (and the question it was answered as),
 * the steps as they stream in (folded once the answer is there), the live line while it
 * runs, the answer, sqlnb's question back with a box to answer it, or why there is none.
 * A turn draws again when it changes (turnUpdated), not for its live line's events.
 */
import { Button } from '@jupyterlab/ui-components';
import React, { useContext, useLayoutEffect, useRef, useState } from 'react';
import type { NotebookChat } from '../chat';
import { answerSql, Step, stepLabel, stepsSummary, Turn, turnErrorText } from '../core/conversation';
import { describeError, ErrorInfo, RequestError } from '../core/protocol';
import { Answer } from './answer';
import { ScrollContext } from './context';
import { useSignal } from './hooks';
import { LiveLine } from './live-line';
import { UserQuestion } from './question';
import { SqlBlock } from './sql';

/** Put an error where the user sees it: the panel's status line. */
export function showError(chat: NotebookChat, e: unknown): void {
  const info: ErrorInfo = e instanceof RequestError ? e.info : { kind: 'error', message: String(e) };
  chat.setNotice({ text: describeError(info), error: true });
}

function StepView(props: { step: Step }): JSX.Element {
  const s = props.step;
  return (
    <div
      className="sqlnb-step"
      data-kind={s.kind}
      data-ok={s.kind === 'attempt' ? String(!!s.ok) : undefined}
    >
      <div className="sqlnb-step-label">{stepLabel(s)}</div>
      {s.sql && s.kind === 'attempt' ? <SqlBlock sql={s.sql} className="sqlnb-step-sql" /> : null}
    </div>
  );
}

interface ITurnProps {
  chat: NotebookChat;
  turnId: string;
  /** the last turn of the conversation (only its question back can be answered) */
  isLast: boolean;
}

function TurnBody(props: ITurnProps): JSX.Element | null {
  const { chat, turnId, isLast } = props;
  useSignal(chat.turnUpdated, turn => turn.id === turnId);
  const turn = chat.turn(turnId);
  const node = useRef<HTMLDivElement>(null);
  const was = useRef<string | null>(null);
  const scroller = useContext(ScrollContext);
  useLayoutEffect(() => {
    const answer = node.current?.querySelector('.sqlnb-answer');
    if (was.current === 'running' && turn && turn.status !== 'running' && answer) {
      // the answer has come: its start in view (its rows and chart below it), not the end
      answer.scrollIntoView({ block: 'start' });
    } else {
      scroller.down();
    }
    was.current = turn?.status ?? null;
  }, [turn, scroller]);
  if (!turn) {
    return null;
  }
  const running = turn.status === 'running';
  const steps = (
    <div className="sqlnb-steps">
      {turn.steps.map((s, i) => (
        <StepView key={i} step={s} />
      ))}
      {running ? <LiveLine chat={chat} turnId={turn.id} /> : null}
    </div>
  );
  const error = turnErrorText(turn);
  return (
    <div
      ref={node}
      className={`sqlnb-turn${running ? ' sqlnb-running' : ''}`}
      data-turn={turn.id}
      data-status={running ? undefined : turn.status}
    >
      <UserQuestion turn={turn} />
      {/* the steps fold away once the answer is there */}
      {!running && turn.steps.length ? (
        <details className="sqlnb-steps-box">
          <summary className="sqlnb-muted">{stepsSummary(turn)}</summary>
          {steps}
        </details>
      ) : (
        steps
      )}
      {turn.status === 'success' && turn.sql ? <Answer chat={chat} turn={turn} /> : null}
      {turn.status === 'needs_clarification' ? (
        <>
          {/* the best query found before the model asked back: usable as it is */}
          {answerSql(turn) ? <Answer chat={chat} turn={turn} /> : null}
          <Clarify chat={chat} turn={turn} canAnswer={isLast} />
        </>
      ) : null}
      {error ? <div className="sqlnb-error">{error}</div> : null}
    </div>
  );
}

/** A turn, drawn again only when it changes (or stops being the last one). */
export const TurnView = React.memo(TurnBody);

/** The answers typed into question-back boxes, per notebook and turn (kept across redraws). */
const clarifyDrafts = new WeakMap<NotebookChat, Map<string, string>>();

function draftsOf(chat: NotebookChat): Map<string, string> {
  let drafts = clarifyDrafts.get(chat);
  if (!drafts) {
    drafts = new Map();
    clarifyDrafts.set(chat, drafts);
  }
  return drafts;
}

/** sqlnb's question back, and (on the last turn) a box to answer it. */
function Clarify(props: { chat: NotebookChat; turn: Turn; canAnswer: boolean }): JSX.Element {
  const { chat, turn, canAnswer } = props;
  const drafts = draftsOf(chat);
  const [text, setText] = useState(() => drafts.get(turn.id) ?? '');
  const [sending, setSending] = useState(false);
  const send = () => {
    const answer = text.trim();
    if (!answer || chat.running || sending) {
      return;
    }
    setSending(true);
    // kept until the answer is on its way: a failed start leaves it in the box
    drafts.set(turn.id, answer);
    chat.ask(answer, true).then(
      () => drafts.delete(turn.id),
      e => {
        setSending(false);
        showError(chat, e);
      }
    );
  };
  return (
    <div className="sqlnb-clarify">
      <div className="sqlnb-muted">sqlnb needs to know:</div>
      <ul className="sqlnb-clarify-questions">
        {turn.questions.map((q, i) => (
          <li key={i} className="sqlnb-clarify-question">
            {q}
          </li>
        ))}
      </ul>
      {canAnswer ? (
        <>
          <textarea
            className="jp-mod-styled sqlnb-clarify-input"
            rows={2}
            placeholder="Your answer (Enter sends)"
            value={text}
            onChange={e => {
              setText(e.currentTarget.value);
              drafts.set(turn.id, e.currentTarget.value);
            }}
            onKeyDown={e => {
              if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
                e.preventDefault();
                e.stopPropagation();
                send();
              }
            }}
          />
          <Button
            type="button"
            className="sqlnb-button jp-mod-accept sqlnb-clarify-send"
            title="Send the answer"
            disabled={sending}
            onClick={send}
          >
            Answer
          </Button>
        </>
      ) : null}
    </div>
  );
}

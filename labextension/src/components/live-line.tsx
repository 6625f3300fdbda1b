/**
 * A running turn's live line: what the run does now, the seconds since it started, and the
 * end of the model's text as it is written. It alone draws again for the run's `phase` and
 * `text` events (up to every 0.1 s) and for its clock (every second).
 */
import React, { useContext, useRef } from 'react';
import type { NotebookChat } from '../chat';
import type { Turn } from '../core/conversation';
import { elapsedText } from '../core/format';
import { ScrollContext } from './context';
import { useBeforePaint, useSignal, useTicker } from './hooks';

/** The line itself, for a turn as it is now. */
export function LiveLineView(props: { turn: Turn; now?: number }): JSX.Element {
  const { turn } = props;
  const text = turn.live?.text ?? '';
  const textRef = useRef<HTMLPreElement>(null);
  const scroller = useContext(ScrollContext);
  useBeforePaint(() => {
    if (textRef.current) {
      textRef.current.scrollTop = textRef.current.scrollHeight; // the newest words in view
    }
    scroller.down();
  }, [turn.live, scroller]);
  return (
    <div className="sqlnb-live">
      <div className="sqlnb-thinking sqlnb-muted">
        <span className="sqlnb-live-label">
          {turn.live?.label ?? (turn.steps.length ? 'Working…' : 'Waiting for the kernel…')}
        </span>
        <span className="sqlnb-elapsed" data-since={turn.startedAt}>
          {elapsedText(turn.startedAt, props.now)}
        </span>
      </div>
      {text ? (
        <pre ref={textRef} className="sqlnb-live-text">
          {text}
        </pre>
      ) : null}
    </div>
  );
}

/** The live line of the turn `turnId` of `chat`, following its live events and its clock. */
export function LiveLine(props: { chat: NotebookChat; turnId: string }): JSX.Element | null {
  const { chat, turnId } = props;
  useSignal(chat.liveChanged, turn => turn.id === turnId);
  const turn = chat.turn(turnId);
  useTicker(turn?.status === 'running');
  if (!turn) {
    return null;
  }
  return <LiveLineView turn={turn} />;
}

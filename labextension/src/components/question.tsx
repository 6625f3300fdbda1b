/**
 * A turn's question as the user asked it, and, for a follow-up the kernel rewrote to stand
 * alone, the question it answered ("Answered as: …", muted, right under it).
 */
import React from 'react';
import type { Turn } from '../core/conversation';

export function UserQuestion(props: { turn: Turn }): JSX.Element {
  const { turn } = props;
  const asked = (
    <div
      className={`sqlnb-user-question${turn.followUp ? ' sqlnb-follow-up' : ''}`}
      title={turn.connection ? `Asked about ${turn.connection}` : undefined}
    >
      {turn.question}
    </div>
  );
  const answeredAs = turn.answeredAs?.trim();
  if (!answeredAs || answeredAs === turn.question.trim()) {
    return asked;
  }
  return (
    <>
      {asked}
      <div
        className="sqlnb-answered-as sqlnb-muted"
        title="The follow-up question as sqlnb answered it, written to stand alone"
      >
        <i>Answered as:</i> {answeredAs}
      </div>
    </>
  );
}

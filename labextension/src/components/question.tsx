/** A turn's question as the user asked it. */
import React from 'react';
import type { Turn } from '../core/conversation';

export function UserQuestion(props: { turn: Turn }): JSX.Element {
  const { turn } = props;
  return (
    <div
      className={`sqlnb-user-question${turn.followUp ? ' sqlnb-follow-up' : ''}`}
      title={turn.connection ? `Asked about ${turn.connection}` : undefined}
    >
      {turn.question}
    </div>
  );
}

/**
 * The local model the Jupyter server shares (GET /sqlnb/model): "Loading the local model…
 * 12 s" while it loads, a moment's "Local model ready" once this page saw it load, and why
 * it failed with what to do. Nothing when no shared model is configured, or once ready.
 */
import React from 'react';
import type { IModelStatusLine } from '../core/modelstatus';
import type { ModelServerStatus } from '../modelserver';
import { useSignal, useTicker } from './hooks';

export function ModelStatusLineView(props: { line: IModelStatusLine | null }): JSX.Element | null {
  const { line } = props;
  if (!line) {
    return null;
  }
  return (
    <div
      className={`sqlnb-model-status sqlnb-model-${line.kind}`}
      data-state={line.kind}
      role={line.kind === 'failed' ? 'alert' : 'status'}
      title={line.title || undefined}
    >
      <span className="sqlnb-model-text">{line.text}</span>
      {line.hint ? (
        <>
          {' '}
          {line.command ? (
            <code className="sqlnb-model-hint">{line.hint}</code>
          ) : (
            <span className="sqlnb-model-hint">{line.hint}</span>
          )}
        </>
      ) : null}
    </div>
  );
}

/** The line for `status`, kept current (its clock while loading). */
export function ModelStatus(props: { status: ModelServerStatus | null }): JSX.Element | null {
  const { status } = props;
  useSignal(status?.changed);
  useTicker(status?.status.state === 'loading');
  return <ModelStatusLineView line={status ? status.line() : null} />;
}

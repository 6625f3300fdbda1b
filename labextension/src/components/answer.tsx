/**
 * An answer: its explanation first, the rating, the SQL, what to do with it right under it
 * (Insert, Insert and run, Copy, Insert chart, Remember), then its rows ("Show N more"
 * reaches every row), its chart, and the other readings the drafts gave.
 */
import { Clipboard } from '@jupyterlab/apputils';
import { Button } from '@jupyterlab/ui-components';
import React, { useState } from 'react';
import { NotebookChat, ROWS_PAGE } from '../chat';
import { alternativeText, shownSql, Turn } from '../core/conversation';
import { thumbsUpIcon } from '../icons';
import { Chart } from './chart';
import { ConfidenceBadge } from './confidence';
import { ResultTable } from './result';
import { SqlBlock } from './sql';

const CLOSED = 'The notebook this answer belongs to is closed.';

/** Insert a cell at the end of the notebook, the notebook taking the keyboard. */
function insert(chat: NotebookChat, source: string, run = false): void {
  void chat.insertCell(source, run, { end: true, focus: true }).then(ok => {
    if (!ok) {
      chat.setNotice({ text: CLOSED, error: true });
    }
  });
}

export function Answer(props: { chat: NotebookChat; turn: Turn }): JSX.Element {
  const { chat, turn } = props;
  const best = turn.status === 'needs_clarification';
  const source = turn.cell ?? turn.sql ?? '';
  return (
    <div className="sqlnb-answer">
      {turn.explanation ? <p className="sqlnb-explanation">{turn.explanation}</p> : null}
      {best || turn.confidence ? (
        <div className="sqlnb-answer-head">
          {best ? <span className="sqlnb-muted sqlnb-best-so-far">Best guess:</span> : null}
          {turn.confidence ? <ConfidenceBadge confidence={turn.confidence} /> : null}
        </div>
      ) : null}
      <SqlBlock sql={shownSql(turn) ?? ''} />
      {/* what to do with the SQL comes right under it, before the rows and the chart (in view at 250 px) */}
      <div className="sqlnb-actions">
        <Button
          type="button"
          className="sqlnb-button sqlnb-insert"
          title="Add the %%sql cell at the end of the notebook"
          onClick={() => insert(chat, source)}
        >
          Insert
        </Button>
        <Button
          type="button"
          className="sqlnb-button sqlnb-insert-run"
          title="Add the %%sql cell at the end of the notebook and run it"
          onClick={() => insert(chat, source, true)}
        >
          Insert and run
        </Button>
        <Button
          type="button"
          className="sqlnb-button sqlnb-copy"
          title="Copy the cell source"
          onClick={() => Clipboard.copyToSystem(source)}
        >
          Copy
        </Button>
        {turn.chartCell ? (
          <Button
            type="button"
            className="sqlnb-button sqlnb-insert-chart"
            title="Add a cell that runs the query and draws its chart"
            onClick={() => insert(chat, turn.chartCell!)}
          >
            Insert chart
          </Button>
        ) : null}
        <span className="sqlnb-spacer" />
        <RememberButton chat={chat} turn={turn} />
      </div>
      {turn.columns.length ? <Rows chat={chat} turn={turn} /> : null}
      {turn.chart ? <Chart spec={turn.chart} /> : null}
      {turn.alternatives.length ? <Alternatives chat={chat} turn={turn} /> : null}
      {turn.rememberError ? (
        <div className="sqlnb-error sqlnb-remember-error" role="alert">
          {turn.rememberError}
        </div>
      ) : null}
    </div>
  );
}

/** The thumbs-up: remember this answer (pressed once it is remembered). */
function RememberButton(props: { chat: NotebookChat; turn: Turn }): JSX.Element {
  const { chat, turn } = props;
  const remembered = turn.remembered !== null;
  const about = 'sqlnb shows this question and its SQL to the model as an example for similar questions';
  return (
    <Button
      type="button"
      className={`sqlnb-button sqlnb-remember${remembered ? ' sqlnb-remembered' : ''}`}
      title={remembered ? `Remembered: ${about}` : `Remember this answer: ${about}`}
      aria-label={remembered ? 'Remembered' : 'Remember this answer'}
      aria-pressed={remembered}
      aria-busy={turn.remembering ? true : undefined}
      disabled={!!turn.remembering}
      onClick={() => void chat.remember(turn.id)}
    >
      <thumbsUpIcon.react tag="span" className="sqlnb-thumbs-up" />
      {remembered ? 'Remembered' : turn.remembering ? '…' : ''}
    </Button>
  );
}

/** The answer's rows, how many there are, and the next page one click away. */
function Rows(props: { chat: NotebookChat; turn: Turn }): JSX.Element {
  const { chat, turn } = props;
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const total = turn.rowCount ?? turn.rows.length;
  const more = total - turn.rows.length;
  return (
    <>
      <ResultTable columns={turn.columns} rows={turn.rows} round />
      <div className="sqlnb-muted sqlnb-row-count">
        {more > 0 ? `${turn.rows.length} of ${total} rows` : `${total} row${total === 1 ? '' : 's'}`}
        {more > 0 ? (
          <>
            {' '}
            <Button
              type="button"
              className="sqlnb-button sqlnb-more-rows"
              title="Show more rows of the result"
              disabled={loading}
              onClick={() => {
                // every row within reach: the next page from the result the kernel keeps
                setLoading(true);
                setError(null);
                void chat.loadMoreRows(turn.id).then(failed => {
                  setLoading(false);
                  setError(failed);
                });
              }}
            >
              {`Show ${Math.min(ROWS_PAGE, more)} more`}
            </Button>
          </>
        ) : null}
        {error ? <span className="sqlnb-error sqlnb-rows-error">{error}</span> : null}
      </div>
    </>
  );
}

/**
 * The other results the drafts gave, folded: each with its SQL, first rows and a button
 * that inserts its cell instead of the answer's.
 */
function Alternatives(props: { chat: NotebookChat; turn: Turn }): JSX.Element {
  const { chat, turn } = props;
  const n = turn.alternatives.length;
  return (
    <details className="sqlnb-alternatives">
      <summary className="sqlnb-muted">{`The drafts also gave ${n} other result${n === 1 ? '' : 's'}`}</summary>
      {turn.alternatives.map((alt, index) => (
        <div key={`${index} ${alt.sql}`} className="sqlnb-alternative">
          <div className="sqlnb-alternative-label">{`${index + 1}. ${alternativeText(alt)}`}</div>
          <SqlBlock sql={alt.sql_pretty ?? alt.sql} />
          {alt.columns.length && alt.rows.length ? (
            <ResultTable columns={alt.columns} rows={alt.rows} />
          ) : null}
          <Button
            type="button"
            className="sqlnb-button sqlnb-use-alternative"
            title="Take this reading as the answer and insert its %%sql cell"
            onClick={() => {
              void chat.useAlternative(turn.id, index).then(ok => {
                if (!ok) {
                  chat.setNotice({ text: CLOSED, error: true });
                }
              });
            }}
          >
            Use this
          </Button>
        </div>
      ))}
    </details>
  );
}

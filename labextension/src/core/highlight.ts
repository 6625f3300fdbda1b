/**
 * A small, linear-time SQL tokenizer for highlighting queries in the panel
 * (keywords, strings, numbers, comments, quoted identifiers, operators).
 */

export type TokenType =
  'keyword' | 'string' | 'number' | 'comment' | 'identifier' | 'quoted' | 'operator' | 'punct' | 'space';

export interface Token {
  type: TokenType;
  text: string;
}

const KEYWORDS = new Set(
  (
    'select from where group by order having limit offset join inner left right full outer cross ' +
    'on using as and or not in is null like ilike between case when then else end distinct all ' +
    'union intersect except with recursive insert into values update set delete create table view ' +
    'drop alter index primary key foreign references asc desc nulls first last over partition ' +
    'window rows range filter exists any some cast true false top fetch next only lateral natural ' +
    'count sum avg min max coalesce interval date timestamp qualify returning'
  ).split(' ')
);

export function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  const n = sql.length;
  let i = 0;
  const push = (type: TokenType, text: string) => {
    const last = out[out.length - 1];
    if (last && last.type === type && (type === 'space' || type === 'operator')) {
      last.text += text;
    } else {
      out.push({ type, text });
    }
  };
  while (i < n) {
    const c = sql[i];
    if (c === '-' && sql[i + 1] === '-') {
      let j = sql.indexOf('\n', i);
      j = j === -1 ? n : j;
      push('comment', sql.slice(i, j));
      i = j;
    } else if (c === '/' && sql[i + 1] === '*') {
      let j = sql.indexOf('*/', i + 2);
      j = j === -1 ? n : j + 2;
      push('comment', sql.slice(i, j));
      i = j;
    } else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      while (j < n) {
        if (sql[j] === c) {
          if (sql[j + 1] === c) {
            j += 2;
            continue;
          }
          break;
        }
        j++;
      }
      j = Math.min(n, j + 1);
      push(c === "'" ? 'string' : 'quoted', sql.slice(i, j));
      i = j;
    } else if (/\s/.test(c)) {
      let j = i + 1;
      while (j < n && /\s/.test(sql[j])) {
        j++;
      }
      push('space', sql.slice(i, j));
      i = j;
    } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(sql[i + 1] ?? ''))) {
      let j = i + 1;
      while (j < n && /[0-9._eE]/.test(sql[j])) {
        j++;
      }
      push('number', sql.slice(i, j));
      i = j;
    } else if (/[A-Za-z_\u0080-\uffff]/.test(c)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_$\u0080-\uffff]/.test(sql[j])) {
        j++;
      }
      const word = sql.slice(i, j);
      push(KEYWORDS.has(word.toLowerCase()) ? 'keyword' : 'identifier', word);
      i = j;
    } else if (/[(),;.[\]]/.test(c)) {
      push('punct', c);
      i++;
    } else {
      push('operator', c);
      i++;
    }
  }
  return out;
}

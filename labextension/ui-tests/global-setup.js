/**
 * Builds the test databases (DuckDB + SQLite, see fixtures/make_fixtures.py) into
 * SQLNB_UI_DATA before any test runs. The Python is the one the server runs on
 * (SQLNB_PYTHON, else `python3` on PATH, the one scripts/test puts first).
 */
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

module.exports = async () => {
  const dir = process.env.SQLNB_UI_DATA;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const python = process.env.SQLNB_PYTHON || 'python3';
  execFileSync(python, [path.join(__dirname, 'fixtures', 'make_fixtures.py'), dir], {
    stdio: 'inherit'
  });
};

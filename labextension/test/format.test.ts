import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cellText, displayText, elapsedText } from '../src/core/format';

test('numbers with long fractions are rounded for the eye, the full value kept', () => {
  assert.deepEqual(displayText(87716.22899999999), { text: '87716.23', full: '87716.22899999999' });
  assert.deepEqual(displayText(0.123456), { text: '0.123', full: '0.123456' });
  assert.deepEqual(displayText(-2.5), { text: '-2.5', full: null }); // nothing to round
  assert.deepEqual(displayText('1234.56789'), { text: '1234.57', full: '1234.56789' }); // a decimal as text
  assert.deepEqual(displayText('12.50'), { text: '12.50', full: null }); // two decimals stay as they are
});

test('whole numbers, text and NULL are shown as they came', () => {
  assert.deepEqual(displayText(2024), { text: '2024', full: null }); // a year is not 2,024
  assert.deepEqual(displayText(1234567890123), { text: '1234567890123', full: null });
  assert.deepEqual(displayText('DE'), { text: 'DE', full: null });
  assert.deepEqual(displayText(null), { text: 'NULL', full: null });
  assert.equal(cellText({ a: 1 }), '{"a":1}');
});

test('the live line counts seconds, then minutes', () => {
  assert.equal(elapsedText(1000, 8999), '7 s');
  assert.equal(elapsedText(0, 65000), '1 min 5 s');
  assert.equal(elapsedText(undefined), '');
});

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BoundedMap } from '../../storage/bounded-map.js';

test('setting one entry past the limit forgets the one set longest ago', () => {
  const map = new BoundedMap<string, number>(2);
  map.set('a', 1).set('b', 2).set('c', 3);
  assert.equal([...map.keys()], ['b', 'c']);
});

test('setting a held key again makes it the newest', () => {
  const map = new BoundedMap<string, number>(2);
  map.set('a', 1).set('b', 2).set('a', 10).set('c', 3);
  assert.equal([...map.entries()], [['a', 10], ['c', 3]]);
});

test('use reads a value and keeps it over entries not used since', () => {
  const map = new BoundedMap<string, number | null>(2);
  map.set('a', null).set('b', 2);
  assert.is(map.use('a'), null); // a remembered "no" is a value too
  map.set('c', 3);
  assert.equal([...map.keys()], ['a', 'c']);
  assert.is(map.use('b'), undefined);
  assert.is(map.size, 2); // a miss adds nothing
});

test('get does not change what is forgotten next', () => {
  const map = new BoundedMap<string, number>(2);
  map.set('a', 1).set('b', 2);
  map.get('a');
  map.set('c', 3);
  assert.equal([...map.keys()], ['b', 'c']);
});

test.run();

/**
 * Where the console marks a validation issue (src/console/editor/pointer.ts, issues.ts): the
 * JSON Pointer of a 422 issue found in the editor's text, down to the deepest part that exists,
 * and the block an issue is about.
 */
import { json } from '@codemirror/lang-json';
import { ensureSyntaxTree } from '@codemirror/language';
import { EditorState } from '@codemirror/state';
import { expect } from 'chai';
import { decodePointer, pointerRange } from '../../src/console/editor/pointer.js';
import { issuesByBlock } from '../../src/console/issues.js';

const DOC = {
  id: 'w',
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: {} },
    { id: 'a/b', type: 'api', name: 'Call', config: { url: 'http://x', 'm~n': 1 } },
  ],
  connections: [{ from: 'start', to: 'a/b' }, { from: 'a/b', to: 'ghost' }],
};

function stateOf(text: string): EditorState {
  const state = EditorState.create({ doc: text, extensions: [json()] });
  ensureSyntaxTree(state, state.doc.length, 5000);
  return state;
}

const marked = (state: EditorState, pointer: string): string => {
  const { from, to } = pointerRange(state, pointer);
  return state.sliceDoc(from, to);
};

describe('console: issue positions', () => {
  const text = JSON.stringify(DOC, null, 2);
  const state = stateOf(text);

  it('decodes JSON Pointer escapes', () => {
    expect(decodePointer('/blocks/1/config/m~0n')).to.deep.equal(['blocks', '1', 'config', 'm~n']);
    expect(decodePointer('/a~1b')).to.deep.equal(['a/b']);
    expect(decodePointer('')).to.deep.equal([]);
  });

  it('marks the value a pointer names', () => {
    expect(marked(state, '/blocks/1/config/url')).to.equal('"http://x"');
    expect(marked(state, '/connections/1/to')).to.equal('"ghost"');
    expect(marked(state, '/blocks/1/config/m~0n')).to.equal('1');
  });

  it('marks the deepest part that exists (first line only) when the rest is missing', () => {
    expect(marked(state, '/blocks/0/config/inputFormat')).to.equal('{}');
    expect(marked(state, '/blocks/7/id')).to.equal('[');
  });

  it('finds the block an issue is about: a block path, or a connection to a missing block by its source', () => {
    const found = issuesByBlock(DOC, [
      { path: '/blocks/1/config/url', message: 'bad url' },
      { path: '/connections/1/to', message: 'no block "ghost"' },
      { path: '/connections/0/to', message: 'odd target' },
      { path: '/triggers/0/cron', message: 'bad cron' },
    ]);
    expect(found).to.deep.equal({ 'a/b': ['bad url', 'no block "ghost"', 'odd target'] });
  });
});

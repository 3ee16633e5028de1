import { expect } from 'chai';
import { answerBelongs, placement, turnDecision, unansweredTurn, type TurnMessage } from '../../src/model/chat-turn.js';
import { DEFAULT_LEASE_TIMING } from '../../src/model/lease.js';

const timing = DEFAULT_LEASE_TIMING;
const answeredTurn: TurnMessage[] = [
  { role: 'user', messageId: 'm1', executionId: 'e1' },
  { role: 'assistant', executionId: 'e1' },
];

describe('model: chat turns and session placement', () => {
  it('makes a retried message the same turn: answered, or pending while its answer is not stored', () => {
    expect(turnDecision(answeredTurn, 'm1')).to.deep.equal({ kind: 'answered', executionId: 'e1' });
    const pending = [...answeredTurn, { role: 'user' as const, messageId: 'm2', executionId: 'e2' }];
    expect(turnDecision(pending, 'm2')).to.deep.equal({ kind: 'pending', executionId: 'e2' });
    expect(turnDecision(pending, 'm3')).to.deep.equal({ kind: 'new' });
    expect(turnDecision(pending, undefined)).to.deep.equal({ kind: 'new' });
    // an answer's executionId is not a message id
    expect(turnDecision([{ role: 'assistant', messageId: 'm9', executionId: 'e9' }], 'm9')).to.deep.equal({ kind: 'new' });
  });

  it('names the last turn left unanswered, and nothing once it is answered', () => {
    expect(unansweredTurn([])).to.equal(null);
    expect(unansweredTurn(answeredTurn)).to.equal(null);
    expect(unansweredTurn([...answeredTurn, { role: 'user', executionId: 'e2' }])).to.equal('e2');
    // a user message of a conversation begun before runs were named: nothing to wait for
    expect(unansweredTurn([{ role: 'user' }])).to.equal(null);
  });

  it('stores an answer once, and only after its question', () => {
    expect(answerBelongs(answeredTurn, 'e1')).to.equal(false);
    expect(answerBelongs([{ role: 'user', executionId: 'e2' }], 'e2')).to.equal(true);
    expect(answerBelongs(answeredTurn, 'e3'), 'a run whose question was never stored').to.equal(false);
  });

  it('places a session here, at its live owner, or takes it when free, expired or released', () => {
    expect(placement(null, 'a', 0, timing)).to.deep.equal({ kind: 'take' });
    expect(placement({ owner: 'a', renewedAt: 0 }, 'a', 1, timing)).to.deep.equal({ kind: 'here' });
    expect(placement({ owner: 'b', renewedAt: 0 }, 'a', timing.expireMs - 1, timing)).to.deep.equal({ kind: 'owner', owner: 'b' });
    expect(placement({ owner: 'b', renewedAt: 0 }, 'a', timing.expireMs, timing)).to.deep.equal({ kind: 'take' });
    expect(placement({ owner: 'b', renewedAt: 0, released: true }, 'a', 1, timing)).to.deep.equal({ kind: 'take' });
    expect(placement({ owner: 'a', renewedAt: 0, released: true }, 'a', 1, timing)).to.deep.equal({ kind: 'take' });
  });
});

/**
 * Block-type capabilities are declared once (src/model/capabilities.ts) and the registry
 * (src/blocks/index.ts) must agree with them: every registered type declared, nothing declared
 * for a type that does not exist, containers the same on both sides.
 */
import { expect } from 'chai';
import { blockTypes, capabilityMismatches, conditionBlock, responseBlock, routerBlock } from '../../src/blocks/index.js';
import { conditionConfigSchema } from '../../src/blocks/condition.js';
import { routerConfigSchema } from '../../src/blocks/router.js';
import { isContainerType } from '../../src/blocks/types.js';
import { CAPABILITIES, capabilitiesOf, containerTypes } from '../../src/model/capabilities.js';
import { testBlockTypes } from '../helpers/runtime.js';
import { makeContext } from './context.js';

describe('block capabilities (src/model/capabilities.ts)', () => {
  it('declares every registered block type, and only those', () => {
    expect(Object.keys(CAPABILITIES).sort()).to.deep.equal(Object.keys(blockTypes).sort());
    expect(capabilityMismatches()).to.deep.equal([]);
  });

  it('agrees with the registry on which types contain others', () => {
    for (const [name, type] of Object.entries(blockTypes)) expect(capabilitiesOf(name).contains, name).to.equal(isContainerType(type));
    expect(containerTypes()).to.deep.equal(['loop', 'parallel']);
  });

  it('reports a type registered without capabilities, and capabilities of no registered type', () => {
    expect(capabilityMismatches(testBlockTypes)).to.include('block type "sleep" has no capabilities declared in src/model/capabilities.ts');
    const { memory: _memory, ...withoutMemory } = blockTypes;
    expect(capabilityMismatches(withoutMemory)).to.deep.equal(['capabilities declared for "memory", which is no registered block type']);
    expect(capabilityMismatches({ ...blockTypes, memory: blockTypes['loop']! })).to.deep.equal(['block type "memory": contains children in one of the registry and capabilities.ts only']);
  });

  it('gives a type not declared no capability', () => {
    const none = capabilitiesOf('sleep');
    expect([none.entry, none.responds, none.contains, none.parks, none.readsConnections, none.startsWorkflow]).to.deep.equal([false, false, false, false, false, false]);
    expect(none.route).to.equal(null);
    expect(capabilitiesOf('__proto__').contains).to.equal(false);
  });

  it('names the output field in which a route-deciding type records its choice', async () => {
    const cond = await conditionBlock.run(makeContext({ config: conditionConfigSchema.parse({ branches: [{ id: 'yes', expression: 'true' }] }) }));
    expect(cond.output[capabilitiesOf('condition').route!]).to.equal('yes');
    const routed = await routerBlock.run(makeContext({ config: routerConfigSchema.parse({ mode: 'rules', value: '"a"', routes: [{ id: 'a', equals: 'a' }] }) }));
    expect(routed.output[capabilitiesOf('router').route!]).to.equal('a');
    expect(capabilitiesOf(responseBlock.type).responds).to.equal(true);
  });
});

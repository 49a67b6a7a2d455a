import { describe, expect, it } from 'vitest';
import { afterMatches, findCycle } from './triggers.js';

describe('after another Job', () => {
  const graph: Record<string, string[]> = { b: ['a'], c: ['b'], d: ['a', 'c'] };
  const upstreamsOf = (id: string) => graph[id] ?? [];

  it('finds no cycle in a chain or a fan-in', () => {
    expect(findCycle('e', ['d', 'b'], upstreamsOf)).toBeNull();
    expect(findCycle('b', ['a'], upstreamsOf)).toBeNull();
  });

  it('names the Jobs of the cycle a save would close, in the order they would run', () => {
    // a after c: c → a → b → c
    expect(findCycle('a', ['c'], upstreamsOf)).toEqual(['a', 'b', 'c', 'a']);
    expect(findCycle('a', ['d'], upstreamsOf)).toEqual(['a', 'd', 'a']);
    expect(findCycle('x', ['x'], upstreamsOf)).toEqual(['x', 'x']);
  });

  it('starts on the ends asked for; a cancelled Run or one that found its Source unchanged starts nothing', () => {
    expect(afterMatches('succeeded', 'succeeded', null)).toBe(true);
    expect(afterMatches('succeeded', 'failed', null)).toBe(false);
    expect(afterMatches('failed', 'failed', null)).toBe(true);
    expect(afterMatches('any', 'failed', null)).toBe(true);
    expect(afterMatches('any', 'succeeded', 'source_unchanged')).toBe(false);
    expect(afterMatches('any', 'cancelled', null)).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { automatedRequestSkip, type RequestContext } from './automated-request.js';

const base: RequestContext = { trigger: 'schedule', queued: [], running: 0, superseded: false, maxQueued: 10 };

describe('automatedRequestSkip', () => {
  it('an idle Job takes the fire', () => {
    expect(automatedRequestSkip(base)).toBeNull();
  });
  it('a scheduled Run that merely waits for a worker does not absorb the next fire', () => {
    expect(automatedRequestSkip({ ...base, queued: ['schedule'] })).toBeNull();
  });
  it('a Run in progress: one fire waits behind it, the next folds into that one', () => {
    expect(automatedRequestSkip({ ...base, running: 1 })).toBeNull();
    expect(automatedRequestSkip({ ...base, running: 1, queued: ['schedule'] })).toBe('already_waiting');
    // A waiting Run of another trigger is no reason to drop a fire.
    expect(automatedRequestSkip({ ...base, running: 1, queued: ['manual'] })).toBeNull();
  });
  it('a catch-up fire (a later one came due meanwhile) folds into a waiting one', () => {
    expect(automatedRequestSkip({ ...base, superseded: true, queued: ['schedule'] })).toBe('already_waiting');
    expect(automatedRequestSkip({ ...base, superseded: true })).toBeNull();
  });
  it('a full queue refuses it', () => {
    expect(automatedRequestSkip({ ...base, queued: Array(10).fill('manual') })).toBe('queue_full');
  });
  it('applies to the other automated triggers alike', () => {
    expect(automatedRequestSkip({ ...base, trigger: 'after', queued: ['after'] })).toBeNull();
    expect(automatedRequestSkip({ ...base, trigger: 'after', queued: ['after'], running: 1 })).toBe('already_waiting');
  });
});

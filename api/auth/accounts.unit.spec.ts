import { describe, expect, it } from 'vitest';
import { LoginThrottle } from './accounts.js';

describe('login throttle', () => {
  it('refuses an address after 5 failures in the window, and lets it in again after', () => {
    const sut = new LoginThrottle(5, 60_000);
    const keys = ['email:a@example.com', 'ip:1.2.3.4'];
    for (let i = 0; i < 5; i++) {
      expect(sut.retryAfterMs(keys, 1000 + i)).toBe(0);
      sut.fail(keys, 1000 + i);
    }
    expect(sut.retryAfterMs(keys, 2000)).toBeGreaterThan(0);
    expect(sut.retryAfterMs(keys, 1000 + 60_000)).toBe(0);
  });

  it('limits one client IP across addresses at four times the per-address limit', () => {
    const sut = new LoginThrottle(5, 60_000);
    for (let i = 0; i < 20; i++) sut.fail([`email:user${i}@example.com`, 'ip:9.9.9.9'], 1000);
    expect(sut.retryAfterMs(['email:fresh@example.com', 'ip:9.9.9.9'], 1001)).toBeGreaterThan(0);
    expect(sut.retryAfterMs(['email:fresh@example.com', 'ip:8.8.8.8'], 1001)).toBe(0);
  });

  it('forgets stale keys instead of growing without bound', () => {
    const sut = new LoginThrottle(5, 60_000);
    for (let i = 0; i < 10_001; i++) sut.fail([`email:${i}@example.com`], 0);
    sut.fail(['email:late@example.com'], 120_000);
    expect((sut as unknown as { failures: Map<string, number[]> }).failures.size).toBe(1);
  });
});

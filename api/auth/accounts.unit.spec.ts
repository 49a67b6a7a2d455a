import { describe, expect, it } from 'vitest';
import { delayAfter, loginKeys, loginPolicy, LoginThrottle } from './accounts.js';

describe('login throttle', () => {
  const admin = 'admin@example.com';

  it('lets a few failures through, then makes each further failure wait twice as long, up to the cap', () => {
    expect([0, 4, 5, 6, 7, 8].map((n) => delayAfter(loginPolicy.pair, n))).toEqual([0, 0, 1_000, 2_000, 4_000, 8_000]);
    expect(delayAfter(loginPolicy.pair, 200)).toBe(15 * 60_000);
    const sut = new LoginThrottle();
    const keys = loginKeys(admin, '203.0.113.9');
    let now = 0;
    for (let i = 0; i < 5; i++) {
      expect(sut.retryAfterMs(keys, now)).toBe(0);
      sut.fail(keys, now);
    }
    expect(sut.retryAfterMs(keys, now)).toBe(1_000);
    now += 1_000;
    expect(sut.retryAfterMs(keys, now)).toBe(0);
    expect(sut.fail(keys, now).retryAfterMs).toBe(2_000);
  });

  it('never locks the account itself: 25 failures from one address leave every other address untouched', () => {
    const sut = new LoginThrottle();
    for (let i = 0; i < 25; i++) sut.fail(loginKeys(admin, '203.0.113.9'), 1000 + i);
    expect(sut.retryAfterMs(loginKeys(admin, '203.0.113.9'), 2000)).toBeGreaterThan(60_000);
    expect(sut.retryAfterMs(loginKeys(admin, '198.51.100.4'), 2000)).toBe(0);
    expect(sut.retryAfterMs(loginKeys(' Admin@Example.com ', '203.0.113.9'), 2000)).toBeGreaterThan(0);
  });

  it('slows one address spraying many accounts, and a correct password clears only its own account-and-address count', () => {
    const sut = new LoginThrottle();
    for (let i = 0; i < 20; i++) sut.fail(loginKeys(`user${i}@example.com`, '192.0.2.1'), 1000);
    expect(sut.retryAfterMs(loginKeys('fresh@example.com', '192.0.2.1'), 1001)).toBeGreaterThan(0);
    expect(sut.retryAfterMs(loginKeys('fresh@example.com', '192.0.2.2'), 1001)).toBe(0);
    const keys = loginKeys(admin, '192.0.2.7');
    for (let i = 0; i < 4; i++) sut.fail(keys, 5000);
    expect(sut.succeed(keys)).toBe(4);
    expect(sut.succeed(keys)).toBe(0);
  });

  it('forgets keys that have been quiet for the window, instead of growing without bound', () => {
    const sut = new LoginThrottle();
    for (let i = 0; i < 10_001; i++) sut.fail(loginKeys(`${i}@example.com`, `10.0.${i >> 8}.${i & 255}`), 0);
    sut.fail(loginKeys('late@example.com', '10.9.9.9'), loginPolicy.windowMs + 1);
    expect((sut as unknown as { pairs: Map<string, unknown> }).pairs.size).toBe(1);
    expect(sut.retryAfterMs(loginKeys('0@example.com', '10.0.0.0'), loginPolicy.windowMs + 1)).toBe(0);
  });
});

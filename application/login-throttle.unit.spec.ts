import { describe, expect, it } from 'vitest';
import { delayAfter, loginKeys, loginPolicy, LoginThrottle } from './login-throttle.js';

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
    for (let i = 0; i < 4; i++) {
      expect(sut.attempt(keys, 5000)).toBe(0);
      sut.failed(keys, 5000);
    }
    expect(sut.attempt(keys, 5000)).toBe(0);
    expect(sut.succeed(keys)).toBe(4);
    expect(sut.retryAfterMs(keys, 5000)).toBe(0);
  });

  it('counts an attempt before its password is checked, so a burst of concurrent guesses is throttled like a sequence', () => {
    const sut = new LoginThrottle();
    const keys = loginKeys(admin, '203.0.113.20');
    // Fifteen logins arrive together; none has had its password checked yet.
    const waits = Array.from({ length: 15 }, () => sut.attempt(keys, 1000));
    expect(waits.filter((w) => w === 0)).toHaveLength(loginPolicy.pair.free);
    expect(waits.slice(loginPolicy.pair.free).every((w) => w > 0)).toBe(true);
    // A correct password among them gives back its own attempt, not the others'.
    expect(sut.succeed(keys)).toBe(loginPolicy.pair.free - 1);
  });

  it('counts an IPv6 client by its /64 (one subscriber picks any address in it), and IPv4-mapped IPv6 as the IPv4 address', () => {
    const sut = new LoginThrottle();
    for (let i = 1; i <= 5; i++) sut.fail(loginKeys(admin, `2001:db8:7:9:${i.toString(16)}::${i}`), 1000);
    expect(sut.retryAfterMs(loginKeys(admin, '2001:db8:7:9:ffff:ffff:ffff:fffe'), 1000)).toBeGreaterThan(0);
    expect(sut.retryAfterMs(loginKeys(admin, '2001:0db8:0007:0009::1'), 1000)).toBeGreaterThan(0);
    expect(sut.retryAfterMs(loginKeys(admin, '2001:db8:7:a::1'), 1000)).toBe(0);
    for (let i = 0; i < 5; i++) sut.fail(loginKeys(admin, '::ffff:192.0.2.33'), 1000);
    expect(sut.retryAfterMs(loginKeys(admin, '192.0.2.33'), 1000)).toBeGreaterThan(0);
  });

  it('forgets keys that have been quiet for the window, instead of growing without bound', () => {
    const sut = new LoginThrottle();
    for (let i = 0; i < 10_001; i++) sut.fail(loginKeys(`${i}@example.com`, `10.0.${i >> 8}.${i & 255}`), 0);
    sut.fail(loginKeys('late@example.com', '10.9.9.9'), loginPolicy.windowMs + 1);
    expect((sut as unknown as { pairs: Map<string, unknown> }).pairs.size).toBe(1);
    expect(sut.retryAfterMs(loginKeys('0@example.com', '10.0.0.0'), loginPolicy.windowMs + 1)).toBe(0);
  });
});

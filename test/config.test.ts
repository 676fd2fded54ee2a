import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, SETTING_ALIASES, signInOptionsOf } from '../src/config.js';

/** What loadConfig refused: the settings it names and its message. */
function refusal(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('the settings were accepted');
}

describe('the sign-in settings', () => {
  it('are named SIGN_IN_*, with their defaults, and reach the throttle and the password checks', () => {
    expect(signInOptionsOf(loadConfig({}))).toEqual({
      signInThrottle: { maxFailures: 10, lockMs: 300_000, maxLocksPerAddress: 3 },
      hashing: { concurrency: 1, perAddress: 4 },
    });
    const config = loadConfig({
      SIGN_IN_MAX_FAILURES: '7',
      SIGN_IN_LOCK_SECONDS: '60',
      SIGN_IN_MAX_LOCKS_PER_ADDRESS: '5',
      SIGN_IN_CHECKS_AT_ONCE: '2',
      SIGN_IN_CHECKS_PER_ADDRESS: '8',
    });
    expect(signInOptionsOf(config)).toEqual({
      signInThrottle: { maxFailures: 7, lockMs: 60_000, maxLocksPerAddress: 5 },
      hashing: { concurrency: 2, perAddress: 8 },
    });
  });

  it('are still read by their old LOGIN_* names', () => {
    const config = loadConfig({
      LOGIN_MAX_FAILURES: '7',
      LOGIN_LOCK_SECONDS: '60',
      LOGIN_MAX_LOCKS_PER_ADDRESS: '5',
      LOGIN_CHECKS_AT_ONCE: '2',
      LOGIN_CHECKS_PER_ADDRESS: '8',
    });
    expect(signInOptionsOf(config)).toEqual({
      signInThrottle: { maxFailures: 7, lockMs: 60_000, maxLocksPerAddress: 5 },
      hashing: { concurrency: 2, perAddress: 8 },
    });
    expect(Object.values(SETTING_ALIASES).sort()).toEqual([
      'LOGIN_CHECKS_AT_ONCE',
      'LOGIN_CHECKS_PER_ADDRESS',
      'LOGIN_LOCK_SECONDS',
      'LOGIN_MAX_FAILURES',
      'LOGIN_MAX_LOCKS_PER_ADDRESS',
    ]);
  });

  it('take the new name when both are set, even beside an old value that would be refused', () => {
    for (const [setting, alias] of Object.entries(SETTING_ALIASES)) {
      expect(loadConfig({ [setting]: '6', [alias]: '9' })[setting as keyof typeof SETTING_ALIASES]).toBe(6);
      expect(loadConfig({ [alias]: '0', [setting]: '6' })[setting as keyof typeof SETTING_ALIASES]).toBe(6);
    }
  });

  it('refuse a value set by the old name under the old name, with what is allowed', () => {
    const refused = refusal({ LOGIN_LOCK_SECONDS: '0' });
    expect(refused.message).toBe("LOGIN_LOCK_SECONDS is '0': it must be a whole number of at least 1.");
    expect(refused.problems).toEqual([{ setting: 'LOGIN_LOCK_SECONDS', allowed: 'a whole number of at least 1' }]);
    expect(refusal({ SIGN_IN_LOCK_SECONDS: 'soon' }).problems).toEqual([
      { setting: 'SIGN_IN_LOCK_SECONDS', allowed: 'a whole number of at least 1' },
    ]);
  });
});

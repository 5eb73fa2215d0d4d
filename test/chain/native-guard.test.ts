/** The codec wrapper refuses non-ASCII addresses before the native c32 code (which panics on them). */
import { describe, it, expect } from 'vitest';
import { codec } from '../../src/chain/native.js';

describe('c32 address functions on hostile text', () => {
  it('answer false / throw a JS error for non-ASCII input, and still work on real addresses', () => {
    for (const bad of ['🧨💥', '𝔘𝔫𝔦', '\u202e0xdeadbeef', '１２', 'SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EJ7\u0000']) {
      expect(codec.isValidStacksAddress(bad)).toBe(false);
      expect(() => codec.decodeStacksAddress(bad)).toThrow(/not ASCII|Invalid/);
      expect(() => codec.stacksToBitcoinAddress(bad)).toThrow(/not ASCII|Invalid/);
    }
    const good = 'SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EJ7';
    expect(codec.isValidStacksAddress(good)).toBe(true);
    expect(codec.decodeStacksAddress(good)[0]).toBe(22);
    expect(codec.stacksToBitcoinAddress(good)).toMatch(/^1/);
  });
});

/** Determinism helpers: everything the generator makes (hashes, keys, choices, timestamps) derives from the seed. */
import { createHash } from 'node:crypto';

export function sha256(...parts: (string | number)[]): string {
  return createHash('sha256').update(parts.join('|')).digest('hex');
}

/** xoshiro128** seeded from sha256(seed): fast and reproducible. */
export class Rng {
  private s: Uint32Array;
  constructor(seed: string) {
    const h = Buffer.from(sha256('rng', seed), 'hex');
    this.s = new Uint32Array([h.readUInt32LE(0), h.readUInt32LE(4), h.readUInt32LE(8), h.readUInt32LE(12) | 1]);
  }
  next(): number {
    const s = this.s;
    const r = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return r / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(a: readonly T[]): T {
    return a[Math.floor(this.next() * a.length)];
  }
}
function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

export const hex0x = (h: string) => (h.startsWith('0x') ? h.toLowerCase() : '0x' + h.toLowerCase());

export function tsvTimestamp(unix: number, micros: number): string {
  const d = new Date(unix * 1000);
  return `${d.toISOString().slice(0, 19).replace('T', ' ')}.${String(micros % 1_000_000).padStart(6, '0')}+00`;
}

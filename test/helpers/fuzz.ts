// Deterministic random generation for the fuzz tests: a seeded PRNG (mulberry32) and families of hostile values.

export type Rng = () => number;

export function seededRandom(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const int = (rng: Rng, n: number): number => Math.floor(rng() * n);
export const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[int(rng, xs.length)];

export function hex(rng: Rng, chars: number): string {
  let s = '';
  for (let i = 0; i < chars; i++) s += '0123456789abcdef'[int(rng, 16)];
  return s;
}

/** Hostile parameter values, each tagged with its family (for the report). */
export const HOSTILE_FAMILIES = ['type', 'number', 'negative', 'unicode', 'sql', 'long', 'format', 'empty'] as const;
export type HostileFamily = (typeof HOSTILE_FAMILIES)[number];

/** A raw (not yet percent-encoded) hostile value of `family`. */
export function hostileValue(rng: Rng, family: HostileFamily): string {
  switch (family) {
    case 'type':
      return pick(rng, ['abc', 'true', 'false', 'null', 'undefined', '1.5', '1e3', '0x10', '[]', '{}', 'NaN', 'Infinity', '0b1', ' 1', '1 ', '+1', '１２']);
    case 'number':
      return pick(rng, [
        '9007199254740993',
        '99999999999999999999999999999999',
        '1' + '0'.repeat(400),
        '2147483648',
        '4294967296',
        '18446744073709551616',
        String(int(rng, 1e9)),
        '1e308',
        '0',
        '00000000000000000000001',
      ]);
    case 'negative':
      return pick(rng, ['-1', '-0', '-9007199254740993', '-2147483649', '-' + String(int(rng, 1e6)), '--1', '-']);
    case 'unicode':
      return pick(rng, ['é', '日本語', '𝔘𝔫𝔦', '\u202e0xdeadbeef', '\u0000', '\uffff', 'Ω'.repeat(50), 'SP\u00a0123', '🧨💥', '\ud800']);
    case 'sql':
      return pick(rng, [
        "' OR '1'='1",
        "1; DROP TABLE txs;--",
        "0x00' UNION SELECT * FROM blocks--",
        '1) OR (1=1',
        "'; SELECT pg_sleep(10);--",
        '$1',
        '%s%s%s',
        '\\x00',
        "SP000000000000000000002Q6VF78'--",
      ]);
    case 'long':
      return pick(rng, ['a', '0', 'f', 'é', 'SP'])!.repeat(pick(rng, [300, 2000, 8000, 30000]));
    case 'format':
      return pick(rng, [
        '0x' + hex(rng, 63),
        '0x' + hex(rng, 65),
        '0X' + hex(rng, 64),
        '0x' + hex(rng, 62) + 'zz',
        'SP' + hex(rng, 30).toUpperCase(),
        'SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EJ7.',
        'SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EJ7.1bad',
        'ST000000000000000000002AMW42H.pox-4.extra',
        'latest',
        '..',
        '%',
        '%zz',
        '%c3%28',
      ]);
    case 'empty':
      return '';
  }
}

/** Percent-encodes a value, except the families that test raw encodings (they are sent as written when valid). */
export function encodeValue(v: string): string {
  if (v === '%' || v === '%zz' || v === '%c3%28') return v;
  try {
    return encodeURIComponent(v);
  } catch {
    return encodeURIComponent(v.replace(/[\ud800-\udfff]/g, '?')) + '%ED%A0%80'; // a lone surrogate, as raw bytes
  }
}

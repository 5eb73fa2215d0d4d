import { cv } from '../../src/chain/pox.js';

/** A pox print value `(ok (tuple (balance ..) (burnchain-unlock-height ..) (data ..) (locked ..) (name ..) (stacker ..)))`. */
export function poxPrint(
  name: string,
  stacker: string,
  data: Record<string, string>,
  o: { locked?: bigint; balance?: bigint; unlock?: bigint } = {},
): string {
  return (
    '0x07' +
    cv
      .tuple({
        balance: cv.uint(o.balance ?? 1000n),
        'burnchain-unlock-height': cv.uint(o.unlock ?? 0n),
        data: cv.tuple(data),
        locked: cv.uint(o.locked ?? 0n),
        name: cv.stringAscii(name),
        stacker: cv.principal(stacker),
      })
      .slice(2)
  );
}

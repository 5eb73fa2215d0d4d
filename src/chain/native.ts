// Loads the native Stacks codec. The package is CommonJS whose functions are re-exported through
// a getter chain that Node's ESM named-export detection cannot see, so it is loaded with require.
//
// The decoders that read Clarity values are wrapped with the checks of wire-guard.ts: on an unknown Clarity type id
// the native code spins forever instead of failing, so such input is rejected (MalformedWireError) before it gets there.
// The c32 address functions panic (a Rust panic, printed to stderr with a backtrace) on non-ASCII text: such an input
// is refused here, as the codec refuses any other malformed address.
import { createRequire } from 'node:module';
import { checkClarityValue, checkTransaction } from './wire-guard.js';

type NativeCodec = typeof import('@hirosystems/stacks-encoding-native-js');

const require = createRequire(import.meta.url);

const native = require('@hirosystems/stacks-encoding-native-js') as NativeCodec;

export const codec: NativeCodec = {
  ...native,
  decodeTransaction: (arg) => {
    checkTransaction(arg);
    return native.decodeTransaction(arg);
  },
  decodeClarityValueToRepr: (arg) => {
    checkClarityValue(arg);
    return native.decodeClarityValueToRepr(arg);
  },
  decodeClarityValueToTypeName: (arg) => {
    checkClarityValue(arg);
    return native.decodeClarityValueToTypeName(arg);
  },
  decodeClarityValue: ((arg: string | Buffer) => {
    checkClarityValue(arg);
    return native.decodeClarityValue(arg);
  }) as NativeCodec['decodeClarityValue'],
  decodeClarityValueToPrincipal: (arg) => {
    checkClarityValue(arg);
    return native.decodeClarityValueToPrincipal(arg);
  },
  isValidStacksAddress: (address) => ASCII_RE.test(address) && native.isValidStacksAddress(address),
  decodeStacksAddress: (address) => native.decodeStacksAddress(asciiAddress(address)),
  stacksToBitcoinAddress: (address) => native.stacksToBitcoinAddress(asciiAddress(address)),
};

const ASCII_RE = /^[\x21-\x7e]*$/;

function asciiAddress(address: string): string {
  if (!ASCII_RE.test(address)) throw new Error('Invalid c32 address: not ASCII');
  return address;
}

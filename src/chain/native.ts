// Loads the native Stacks codec. The package is CommonJS whose functions are re-exported through
// a getter chain that Node's ESM named-export detection cannot see, so it is loaded with require.
//
// The decoders that read Clarity values are wrapped with the checks of wire-guard.ts: on an unknown Clarity type id
// the native code spins forever instead of failing, so such input is rejected (MalformedWireError) before it gets there.
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
};

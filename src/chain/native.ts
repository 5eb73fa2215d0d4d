// Loads the native Stacks codec. The package is CommonJS whose functions are re-exported through
// a getter chain that Node's ESM named-export detection cannot see, so it is loaded with require.
import { createRequire } from 'node:module';

type NativeCodec = typeof import('@hirosystems/stacks-encoding-native-js');

const require = createRequire(import.meta.url);

export const codec: NativeCodec = require('@hirosystems/stacks-encoding-native-js') as NativeCodec;

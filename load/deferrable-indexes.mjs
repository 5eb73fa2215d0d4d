// Prints the indexes `import-events` defers (DEFERRABLE_INDEXES of src/store/bulk-indexes.ts, from the build) as a
// PostgreSQL array literal, for `psql -v deferrable=…` (load/row-costs.sql). Needs `npm run build` first.
import { DEFERRABLE_INDEXES } from '../dist/src/store/bulk-indexes.js';

console.log(`{${DEFERRABLE_INDEXES.join(',')}}`);

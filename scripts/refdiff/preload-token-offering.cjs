// Preloaded with `node -r` by run-stream.sh for the reference's `import-events`.
//
// The reference's import-events always calls importV1TokenOfferingData(), which reads
// <app>/genesis-data/chainstate.txt.gz (the Stacks 1.0 genesis vesting schedule, mainnet
// addresses only) and checks its sha256. That blob is absent from the local mirror of the
// reference (git archive cannot export it), so the import would fail before replaying a
// single event. When the file is absent, this preload turns that one step into a no-op:
// the token_offering_locked table stays empty. When the file is present, nothing changes.
'use strict';
const fs = require('fs');
const path = require('path');

const appDir = process.env.REF_APP_DIR || path.join(__dirname, 'app');
const gz = path.join(appDir, 'genesis-data', 'chainstate.txt.gz');
if (!fs.existsSync(gz)) {
  const mod = require(path.join(appDir, 'lib', 'import-v1', 'index.js'));
  mod.importV1TokenOfferingData = async function skippedImportV1TokenOfferingData() {
    console.warn(
      `[refsrv preload] ${gz} is absent: skipping the Stacks 1.0 token offering (vesting) import; ` +
        'token_offering_locked stays empty'
    );
  };
}

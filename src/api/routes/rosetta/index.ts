/** Every Rosetta endpoint under /rosetta/v1, and the mount's own route-not-found answer. */
import { endpoint, raw } from '../../endpoint.js';
import { httpError } from '../../../http/response.js';
import { rosettaNetworkEndpoints } from './network.js';
import { rosettaBlockEndpoints } from './block.js';
import { rosettaMempoolEndpoints } from './mempool.js';
import { rosettaAccountEndpoints } from './account.js';
import { rosettaConstructionEndpoints } from './construction.js';

/** Anything else under /rosetta/v1 (another method, an unknown path): 404 with the reference's message (`POST /rosetta/v1/x not found`). */
const rosettaNotFound = endpoint({
  method: 'ANY',
  path: '/rosetta/v1/*',
  operationId: 'rosetta_not_found',
  summary: 'Unknown Rosetta route',
  tags: ['Rosetta'],
  hidden: true,
  text: { contentType: 'application/json', description: 'Never: always 404 `{message}`' },
  errors: [404],
  cache: 'none',
  handler: ({ req }) => raw(httpError(404, `${req.method} ${req.path} not found`)),
});

export const rosettaEndpoints = [
  ...rosettaNetworkEndpoints,
  ...rosettaBlockEndpoints,
  ...rosettaMempoolEndpoints,
  ...rosettaAccountEndpoints,
  ...rosettaConstructionEndpoints,
  rosettaNotFound,
];

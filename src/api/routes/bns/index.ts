/** The BNS v1 endpoints, at the root as the reference mounts them. */
import { bnsNameEndpoints } from './names.js';
import { bnsNamespaceEndpoints } from './namespaces.js';
import { bnsAddressEndpoints } from './addresses.js';
import { bnsPriceEndpoints } from './pricing.js';
import { bnsV2Endpoints } from './v2.js';

export const bnsEndpoints = [...bnsNameEndpoints, ...bnsNamespaceEndpoints, ...bnsAddressEndpoints, ...bnsPriceEndpoints, ...bnsV2Endpoints];

/** POST /rosetta/v1/construction/* (filled in below). */
import type { Endpoint } from '../../endpoint.js';

export const rosettaConstructionEndpoints: Endpoint[] = [];

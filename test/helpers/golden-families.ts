/**
 * The endpoint families of fixtures/golden-ext, in one table: which requests each family owns, which capability of
 * ../shared/REFERENCE-MAP.md §4 it belongs to, and whether test/conformance/conformance-ext.test.ts holds it to the reference yet.
 *
 *  - `not-served`: the routes are not implemented; the suite reports how many answers already match, never fails.
 *  - `must-match`: every answer must match the reference (and validate against the served OpenAPI document), or the
 *    suite fails listing the mismatches.
 *
 * Serving a family means flipping its `state` here, and nothing else. A golden-ext request that no family (or more
 * than one) claims fails the suite, so new recorded routes cannot go unchecked.
 */

export type FamilyState = 'must-match' | 'not-served';

export interface EndpointFamily {
  name: string;
  /** REFERENCE-MAP.md §4 capability: A accounts/fees, B tokens, C explorer views, D stacking, E BNS, F Rosetta */
  capability: 'A' | 'B' | 'C' | 'D' | 'E' | 'F';
  /** the group of capabilities it belongs to */
  issue: 'wallets & tokens' | 'explorer & stacking' | 'BNS' | 'Rosetta';
  state: FamilyState;
  /** matched against `${METHOD} ${path}` (path without its query string) */
  routes: RegExp[];
  /**
   * Recorded answers that carry a reference bug we do not copy: reported as mismatches, but they do not fail a
   * must-match family. Each names its scenario, the request path (no query) and why.
   */
  referenceBugs?: { scenario: string; path: RegExp; why: string }[];
}

/** The reference bug a recorded answer carries, if the family lists one for it. */
export function referenceBug(family: EndpointFamily, scenario: string, request: string): string | undefined {
  const path = request.split('?')[0];
  return family.referenceBugs?.find((b) => b.scenario === scenario && b.path.test(path))?.why;
}

const ID = '[^/]+';

export const ENDPOINT_FAMILIES: readonly EndpointFamily[] = [
  {
    name: 'accounts',
    capability: 'A',
    issue: 'wallets & tokens',
    // stx_inbound rows tied on (height, microblock, tx index) compare as a set: the reference's
    // sort has no tie-break and leaves them in its table's storage order, which follows page placement (free space),
    // not only insertion (test/helpers/golden-compare.ts inboundTieKey)
    state: 'must-match',
    routes: [
      new RegExp(`^GET /extended/v1/address/${ID}/(transactions|transactions_with_transfers|assets|stx_inbound|nonces)$`),
      new RegExp(`^GET /extended/v2/addresses/${ID}/balances/stx$`),
      new RegExp(`^GET /extended/v2/addresses/${ID}/transactions(/${ID}/events)?$`),
    ],
  },
  {
    name: 'accounts-balances',
    capability: 'A',
    issue: 'wallets & tokens',
    state: 'must-match',
    routes: [
      new RegExp(`^GET /extended/v1/address/${ID}/balances$`),
      new RegExp(`^GET /extended/v2/addresses/${ID}/balances/(ft|ft/${ID})$`),
    ],
  },
  {
    name: 'fees',
    capability: 'A',
    issue: 'wallets & tokens',
    state: 'must-match',
    routes: [/^POST \/extended\/v1\/fee_rate$/, /^GET \/extended\/v2\/mempool\/fees$/],
  },
  {
    name: 'tokens',
    capability: 'B',
    issue: 'wallets & tokens',
    state: 'must-match',
    routes: [new RegExp(`^GET /extended/v1/tokens/(nft/(holdings|history|mints)|ft/${ID}/holders)$`)],
    referenceBugs: [
      {
        scenario: 'mainnet-reorg-scenario2',
        path: /^\/extended\/v1\/tokens\/ft\/stx\/holders$/,
        why:
          "the reference's STX row of ft_balances credits a microblock tx's fee back twice on a microblock re-org " +
          '(updateFtBalancesFromMicroblockReOrg), so SPG771… is 360 µSTX richer than its /stx balance; we answer the /stx figure',
      },
    ],
  },
  {
    name: 'tx-lists',
    capability: 'C',
    issue: 'explorer & stacking',
    state: 'must-match',
    routes: [
      /^GET \/extended\/v1\/tx$/,
      /^GET \/extended\/v1\/tx\/mempool\/dropped$/,
      new RegExp(`^GET /extended/v1/tx/${ID}/raw$`),
      new RegExp(`^GET /extended/v1/tx/(block|block_height)/${ID}$`),
      new RegExp(`^GET /extended/v2/blocks/${ID}/transactions$`),
    ],
  },
  {
    name: 'nakamoto',
    capability: 'C',
    issue: 'explorer & stacking',
    state: 'must-match',
    routes: [
      /^GET \/extended\/v2\/blocks\/average-times$/,
      new RegExp(`^GET /extended/v2/blocks/${ID}/signer-signatures$`),
      new RegExp(`^GET /extended/v2/block-tenures/${ID}/blocks$`),
    ],
  },
  {
    name: 'burn-blocks',
    capability: 'C',
    issue: 'explorer & stacking',
    state: 'must-match',
    routes: [new RegExp(`^GET /extended/v2/burn-blocks(/${ID}(/blocks)?)?$`), new RegExp(`^GET /extended/v1/block/by_burn_block_hash/${ID}$`)],
  },
  {
    name: 'microblocks',
    capability: 'C',
    issue: 'explorer & stacking',
    state: 'must-match',
    routes: [new RegExp(`^GET /extended/v1/microblock(/unanchored/txs|/${ID})?$`)],
  },
  {
    name: 'supply-info',
    capability: 'C',
    issue: 'explorer & stacking',
    state: 'must-match',
    routes: [
      /^GET \/extended\/v1\/stx_supply(\/legacy_format|\/total\/plain|\/circulating\/plain)?$/,
      new RegExp(`^GET /extended/v1/info/(network_block_times|network_block_time/${ID})$`),
    ],
  },
  {
    name: 'search',
    capability: 'C',
    issue: 'explorer & stacking',
    state: 'must-match',
    routes: [new RegExp(`^GET /extended/v1/search/${ID}$`)],
  },
  {
    name: 'contracts',
    capability: 'C',
    issue: 'explorer & stacking',
    // by_trait: deploys of one block come in the order the reference's sort leaves them, reproduced by running the
    // same sort over the deploys in the order they were stored (src/store/contract-lists.ts)
    state: 'must-match',
    routes: [/^GET \/extended\/v1\/contract\/by_trait$/, /^GET \/extended\/v2\/smart-contracts\/status$/],
  },
  {
    name: 'pox',
    capability: 'D',
    issue: 'explorer & stacking',
    state: 'must-match',
    routes: [
      new RegExp(`^GET /extended/v1/pox\\d+/(events|tx/${ID}|stacker/${ID}|${ID}/delegations)$`),
      // the legacy `/pox<N>_events` prefix: sub-paths redirect, the rest are route-not-found answers
      /^GET \/extended\/v1\/pox\d+_events(\/.*)?$/,
      new RegExp(`^GET /extended/v2/pox/cycles(/${ID}(/signers(/${ID}(/stackers)?)?)?)?$`),
    ],
  },
  {
    name: 'burnchain-rewards',
    capability: 'D',
    issue: 'explorer & stacking',
    state: 'must-match',
    routes: [new RegExp(`^GET /extended/v1/burnchain/(rewards(/${ID}(/total)?)?|reward_slot_holders(/${ID})?)$`)],
  },
  {
    name: 'bns',
    capability: 'E',
    issue: 'BNS',
    state: 'must-match',
    routes: [
      new RegExp(`^GET /v1/names(/${ID}(/subdomains|/zonefile(/${ID})?)?)?$`),
      new RegExp(`^GET /v1/namespaces(/${ID}/names)?$`),
      new RegExp(`^GET /v1/addresses/${ID}/${ID}$`),
      new RegExp(`^GET /v2/prices/(namespaces|names)/${ID}$`),
    ],
  },
  {
    name: 'rosetta',
    capability: 'F',
    issue: 'Rosetta',
    // every answer matches, including the reference's failures on what its transaction library
    // cannot read (Nakamoto payloads) and on contract calls it cannot list (construction/parse, unmined mempool calls)
    state: 'must-match',
    // everything under the Rosetta mount, including its own route-not-found answers
    routes: [/^(GET|POST) \/rosetta\/v1\//],
  },
];

export type FamilyLookup = { family: EndpointFamily; error?: undefined } | { family?: undefined; error: string };

/** The one family that owns a request; an error when none or several do. */
export function familyOf(method: string, request: string): FamilyLookup {
  const key = `${method.toUpperCase()} ${request.split('?')[0]}`;
  const hits = ENDPOINT_FAMILIES.filter((f) => f.routes.some((r) => r.test(key)));
  if (hits.length === 1) return { family: hits[0] };
  if (hits.length === 0) return { error: `${key}: no endpoint family claims it (add it to test/helpers/golden-families.ts)` };
  return { error: `${key}: claimed by several families (${hits.map((f) => f.name).join(', ')})` };
}

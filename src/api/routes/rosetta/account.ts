/** POST /rosetta/v1/account/balance. */
import * as store from '../../../store/rosetta.js';
import { stxLockState } from '../../../store/stx-lock.js';
import { AccountBalanceRequest, AccountBalanceResponse } from '../../schemas/rosetta.js';
import { RosettaErrors, checkAccount, checkNetwork, fail, hashParam, rosettaGuard, rosettaEndpoint } from '../../rosetta.js';
import { STX_CURRENCY } from '../../../chain/rosetta-ops.js';
import { ftMetadata, ftMetadataAvailable } from '../../rosetta-ft.js';

const SUB_ACCOUNTS = ['StackedBalance', 'SpendableBalance', 'VestingLockedBalance', 'VestingUnlockedBalance'];

export const rosettaAccountEndpoints = [
  rosettaEndpoint({
    path: '/rosetta/v1/account/balance',
    operationId: 'rosetta_account_balance',
    summary: 'STX and fungible-token balances and the nonce of an account at a block',
    description:
      'At the chain tip, or at the block an identifier names (`index` above 0 wins over `hash`, as in the reference). The STX balance is the ' +
      'spendable one (balance minus locked); sub-account `StackedBalance` gives the locked STX, `SpendableBalance` the spendable STX, ' +
      '`VestingLockedBalance` / `VestingUnlockedBalance` 0 (the genesis vesting schedule is not imported). Then, as the reference, every fungible ' +
      'token the account moved up to that block (balance 0 included) whose symbol and decimals the node answers (`get-symbol`, `get-decimals` of ' +
      'the token contract, cached), ordered by asset identifier; without a node, STX only. The request cannot narrow them: `currencies` is refused ' +
      "(code 612) as by the reference's schema. `sequence_number` is the next nonce as of that block. Every figure is read from per-block " +
      "checkpoints, not summed over the account's history.",
    body: AccountBalanceRequest,
    response: AccountBalanceResponse,
    errors: [400],
    handler: ({ body }, ctx) =>
      rosettaGuard(async () => {
        await checkNetwork(ctx, body.network_identifier);
        const address = body.account_identifier.address;
        const id = (body.block_identifier ?? {}) as Record<string, unknown>;
        if (typeof id.hash === 'string' && id.hash !== '') hashParam(id.hash, RosettaErrors.invalidBlockHash);
        checkAccount(address);
        const hash = typeof id.hash === 'string' && id.hash !== '' ? id.hash : undefined;
        const index = typeof id.index === 'number' ? id.index : undefined;
        let block: store.RosettaBlockRow | undefined;
        if ((hash === undefined && !index) || (index !== undefined && index <= 0)) block = await store.rosettaTip(ctx.sql);
        else if (index !== undefined && index > 0) block = await store.rosettaBlockAtHeight(ctx.sql, index);
        else block = await store.rosettaBlockByHash(ctx.sql, hash!.startsWith('0x') ? hash! : '0x' + hash);
        if (!block) fail(400, RosettaErrors.blockNotFound);
        if (hash !== undefined && block!.block_hash !== hash) fail(400, RosettaErrors.invalidBlockHash);
        const b = block!;
        const sub = body.account_identifier.sub_account?.address;
        if (sub !== undefined && !SUB_ACCOUNTS.includes(sub)) fail(400, RosettaErrors.invalidSubAccount);
        const [stx, lock, assets] = await Promise.all([
          store.rosettaStxAt(ctx.sql, address, b.block_height),
          stxLockState(ctx.sql, address, b.block_height, b.burn_block_height),
          // without a node no token can be described: none is listed, so none is read
          ftMetadataAvailable(ctx.nodes?.()) ? store.rosettaFtAssetsOf(ctx.sql, address) : [],
        ]);
        const total = BigInt(stx.balance);
        const locked = BigInt(lock.locked);
        let value = (total - locked).toString();
        if (sub === 'StackedBalance') value = locked.toString();
        else if (sub === 'VestingLockedBalance' || sub === 'VestingUnlockedBalance') value = '0';
        const balances: { value: string; currency: { symbol: string; decimals: number } }[] = [
          { value, currency: { symbol: STX_CURRENCY.symbol, decimals: STX_CURRENCY.decimals } },
        ];
        if (assets.length) {
          // only the tokens the node describes are reported: their balances are the only ones read
          const meta = await ftMetadata(ctx.nodes?.(), assets);
          const fts = await store.rosettaFtBalancesAt(ctx.sql, address, b.block_height, assets.filter((a) => meta.has(a)));
          // the reference sorts the tokens by asset identifier with String.localeCompare
          fts.sort((x, y) => x.asset_identifier.localeCompare(y.asset_identifier));
          for (const f of fts) {
            const m = meta.get(f.asset_identifier)!;
            balances.push({ value: f.balance, currency: { symbol: m.symbol, decimals: m.decimals } });
          }
        }
        return {
          block_identifier: { index: b.block_height, hash: b.block_hash },
          balances,
          metadata: { sequence_number: stx.nonce === null ? 0 : stx.nonce + 1 },
        };
      }),
  }),
];

/** POST /rosetta/v1/account/balance. */
import * as store from '../../../store/rosetta.js';
import { stxBalance } from '../../views.js';
import { AccountBalanceRequest, AccountBalanceResponse } from '../../schemas/rosetta.js';
import { RosettaErrors, checkAccount, checkNetwork, fail, hashParam, rosettaGuard, rosettaEndpoint } from '../../rosetta.js';
import { STX_CURRENCY } from '../../../chain/rosetta-ops.js';


export const rosettaAccountEndpoints = [
  rosettaEndpoint({
    path: '/rosetta/v1/account/balance',
    operationId: 'rosetta_account_balance',
    summary: 'STX balance and nonce of an account at a block',
    description:
      'At the chain tip, or at the block an identifier names (`index` above 0 wins over `hash`, as in the reference). The balance is the ' +
      'spendable one (balance minus locked); sub-account `StackedBalance` gives the locked STX, `SpendableBalance` the spendable STX, ' +
      '`VestingLockedBalance` / `VestingUnlockedBalance` 0 (no genesis vesting schedules are imported). `sequence_number` is the next nonce as of that block.',
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
        const stx = await stxBalance(ctx.sql, address, b.block_height, b.burn_block_height, false);
        const total = BigInt(stx.balance);
        const locked = BigInt(stx.locked);
        let value = (total - locked).toString();
        const sub = body.account_identifier.sub_account?.address;
        if (sub !== undefined) {
          if (sub === 'StackedBalance') value = locked.toString();
          else if (sub === 'SpendableBalance') value = (total - locked).toString();
          else if (sub === 'VestingLockedBalance' || sub === 'VestingUnlockedBalance') value = '0';
          else fail(400, RosettaErrors.invalidSubAccount);
        }
        const nonce = await store.rosettaNonceAt(ctx.sql, address, b.block_height);
        return {
          block_identifier: { index: b.block_height, hash: b.block_hash },
          balances: [{ value, currency: { symbol: STX_CURRENCY.symbol, decimals: STX_CURRENCY.decimals } }],
          metadata: { sequence_number: nonce },
        };
      }),
  }),
];

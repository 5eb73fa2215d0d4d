// Raw Stacks transaction -> the fields the store needs and the reference API's static JSON.
import type {
  DecodedTxResult,
  TxPostCondition,
  PostConditionPrincipal,
  PrincipalStandardData,
  PrincipalContractData,
  ClarityValueAbstract,
} from '@hirosystems/stacks-encoding-native-js';
import { codec } from './native.js';
import { clarityTypeName, normalizeHex, type ClarityJson } from './clarity.js';

export type TxType =
  | 'token_transfer'
  | 'smart_contract'
  | 'contract_call'
  | 'poison_microblock'
  | 'coinbase'
  | 'tenure_change';

export type AnchorMode = 'on_chain_only' | 'off_chain_only' | 'any';
export type PostConditionMode = 'allow' | 'deny';

export interface FunctionArgJson extends ClarityJson {
  name: string;
  type: string;
}

export interface ContractCallJson {
  contract_id: string;
  function_name: string;
  function_signature: string;
  function_args?: FunctionArgJson[];
}

/** Reference JSON of a transaction's fields that depend only on its raw bytes. */
export interface TxStaticJson {
  tx_id: string;
  nonce: number;
  sponsor_nonce?: number;
  fee_rate: string;
  sender_address: string;
  sponsored: boolean;
  sponsor_address?: string;
  post_condition_mode: PostConditionMode;
  post_conditions: PostConditionJson[];
  anchor_mode: AnchorMode;
  tx_type: TxType;
  token_transfer?: { recipient_address: string; amount: string; memo: string };
  smart_contract?: { clarity_version: number | null; contract_id: string; source_code: string };
  contract_call?: ContractCallJson;
  poison_microblock?: { microblock_header_1: string; microblock_header_2: string };
  coinbase_payload?: { data: string; alt_recipient: string | null; vrf_proof?: string };
  tenure_change_payload?: {
    tenure_consensus_hash: string;
    prev_tenure_consensus_hash: string;
    burn_view_consensus_hash: string;
    previous_tenure_end: string;
    previous_tenure_blocks: number;
    cause: string;
    pubkey_hash: string;
  };
}

export type PostConditionPrincipalJson =
  | { type_id: 'principal_origin' }
  | { type_id: 'principal_standard'; address: string }
  | { type_id: 'principal_contract'; address: string; contract_name: string };

export interface PostConditionAssetJson {
  contract_name: string;
  asset_name: string;
  contract_address: string;
}

export type PostConditionJson =
  | { type: 'stx'; condition_code: string; amount: string; principal: PostConditionPrincipalJson }
  | {
      type: 'fungible';
      condition_code: string;
      amount: string;
      principal: PostConditionPrincipalJson;
      asset: PostConditionAssetJson;
    }
  | {
      type: 'non_fungible';
      condition_code: string;
      principal: PostConditionPrincipalJson;
      asset: PostConditionAssetJson;
      asset_value: ClarityJson;
    };

export interface DecodedTx {
  txId: string;
  rawTx: string;
  txType: TxType;
  /** Native payload type id (0 token transfer … 8 Nakamoto coinbase), for finer storage if needed. */
  payloadTypeId: number;
  nonce: number;
  feeRate: string;
  senderAddress: string;
  sponsored: boolean;
  sponsorAddress: string | null;
  sponsorNonce: number | null;
  anchorMode: AnchorMode;
  postConditionMode: PostConditionMode;
  tokenTransferRecipient: string | null;
  tokenTransferAmount: string | null;
  contractCallContractId: string | null;
  contractCallFunctionName: string | null;
  smartContractContractId: string | null;
  /** Source code of a deployed contract (smart_contract only). */
  smartContractSource: string | null;
  byteSize: number;
  /** Static reference JSON. contract_call carries no ABI information yet: see withContractAbi. */
  api: TxStaticJson;
}

const PAYLOAD = {
  TokenTransfer: 0,
  SmartContract: 1,
  ContractCall: 2,
  PoisonMicroblock: 3,
  Coinbase: 4,
  CoinbaseToAltRecipient: 5,
  VersionedSmartContract: 6,
  TenureChange: 7,
  NakamotoCoinbase: 8,
} as const;
const AUTH_SPONSORED = 5;

function anchorModeString(id: number): AnchorMode {
  switch (id) {
    case 1:
      return 'on_chain_only';
    case 2:
      return 'off_chain_only';
    case 3:
      return 'any';
    default:
      throw new Error(`unexpected anchor mode ${id}`);
  }
}

function postConditionModeString(id: number): PostConditionMode {
  if (id === 1) return 'allow';
  if (id === 2) return 'deny';
  throw new Error(`unexpected post-condition mode ${id}`);
}

function principalString(p: PrincipalStandardData | PrincipalContractData): string {
  return p.type_id === 6 ? `${p.address}.${p.contract_name}` : p.address;
}

function pcPrincipal(p: PostConditionPrincipal): PostConditionPrincipalJson {
  if (p.type_id === 2) return { type_id: 'principal_standard', address: p.address };
  if (p.type_id === 3) return { type_id: 'principal_contract', address: p.address, contract_name: p.contract_name };
  return { type_id: 'principal_origin' };
}

function cv(v: ClarityValueAbstract): ClarityJson {
  return { hex: normalizeHex(v.hex), repr: v.repr };
}

/** Reference JSON of one decoded post-condition. */
export function postConditionJson(pc: TxPostCondition): PostConditionJson {
  switch (pc.asset_info_id) {
    case 0:
      return { type: 'stx', condition_code: pc.condition_name, amount: pc.amount, principal: pcPrincipal(pc.principal) };
    case 1:
      return {
        type: 'fungible',
        condition_code: pc.condition_name,
        amount: pc.amount,
        principal: pcPrincipal(pc.principal),
        asset: {
          contract_name: pc.asset.contract_name,
          asset_name: pc.asset.asset_name,
          contract_address: pc.asset.contract_address,
        },
      };
    case 2:
      return {
        type: 'non_fungible',
        condition_code: pc.condition_name,
        principal: pcPrincipal(pc.principal),
        asset: {
          contract_name: pc.asset.contract_name,
          asset_name: pc.asset.asset_name,
          contract_address: pc.asset.contract_address,
        },
        asset_value: cv(pc.asset_value),
      };
    default:
      throw new Error(`unexpected post-condition asset type ${(pc as { asset_info_id: number }).asset_info_id}`);
  }
}

function tenureCauseString(cause: number): string {
  if (cause === 0) return 'block_found';
  if (cause === 1) return 'extended';
  throw new Error(`unexpected tenure change cause ${cause}`);
}

/**
 * Decode a raw transaction (hex, with or without 0x). Addresses are rendered by the codec with the
 * transaction's own version byte (mainnet SP/SM, testnet ST/SN). Throws on undecodable input.
 */
export function decodeTx(rawTxHex: string): DecodedTx {
  const rawTx = normalizeHex(rawTxHex);
  const d: DecodedTxResult = codec.decodeTransaction(rawTx);
  const origin = d.auth.origin_condition;
  const sponsored = d.auth.type_id === AUTH_SPONSORED;
  const sponsorCond = d.auth.type_id === AUTH_SPONSORED ? d.auth.sponsor_condition : null;
  const senderAddress = origin.signer.address;
  const nonce = Number(origin.nonce);
  const feeRate = BigInt(sponsorCond ? sponsorCond.tx_fee : origin.tx_fee).toString(10);
  const anchorMode = anchorModeString(d.anchor_mode);
  const postConditionMode = postConditionModeString(d.post_condition_mode);

  const api: TxStaticJson = {
    tx_id: normalizeHex(d.tx_id),
    nonce,
    fee_rate: feeRate,
    sender_address: senderAddress,
    sponsored,
    post_condition_mode: postConditionMode,
    post_conditions: d.post_conditions.map(postConditionJson),
    anchor_mode: anchorMode,
    tx_type: 'token_transfer',
  };
  if (sponsorCond) {
    api.sponsor_nonce = Number(sponsorCond.nonce);
    api.sponsor_address = sponsorCond.signer.address;
  }

  let tokenTransferRecipient: string | null = null;
  let tokenTransferAmount: string | null = null;
  let contractCallContractId: string | null = null;
  let contractCallFunctionName: string | null = null;
  let smartContractContractId: string | null = null;
  let smartContractSource: string | null = null;

  const p = d.payload;
  switch (p.type_id) {
    case PAYLOAD.TokenTransfer:
      tokenTransferRecipient = principalString(p.recipient);
      tokenTransferAmount = BigInt(p.amount).toString(10);
      api.tx_type = 'token_transfer';
      api.token_transfer = {
        recipient_address: tokenTransferRecipient,
        amount: tokenTransferAmount,
        memo: normalizeHex(p.memo_hex),
      };
      break;
    case PAYLOAD.SmartContract:
    case PAYLOAD.VersionedSmartContract:
      smartContractContractId = `${senderAddress}.${p.contract_name}`;
      smartContractSource = p.code_body;
      api.tx_type = 'smart_contract';
      api.smart_contract = {
        clarity_version: p.type_id === PAYLOAD.VersionedSmartContract ? p.clarity_version : null,
        contract_id: smartContractContractId,
        source_code: p.code_body,
      };
      break;
    case PAYLOAD.ContractCall:
      contractCallContractId = `${p.address}.${p.contract_name}`;
      contractCallFunctionName = p.function_name;
      api.tx_type = 'contract_call';
      api.contract_call = {
        contract_id: contractCallContractId,
        function_name: p.function_name,
        function_signature: '',
        function_args: p.function_args.map(a => ({
          hex: normalizeHex(a.hex),
          repr: a.repr,
          name: '',
          type: clarityTypeName(a.hex),
        })),
      };
      break;
    case PAYLOAD.PoisonMicroblock:
      api.tx_type = 'poison_microblock';
      api.poison_microblock = {
        microblock_header_1: normalizeHex(p.microblock_header_1.buffer),
        microblock_header_2: normalizeHex(p.microblock_header_2.buffer),
      };
      break;
    case PAYLOAD.Coinbase:
      api.tx_type = 'coinbase';
      api.coinbase_payload = { data: normalizeHex(p.payload_buffer), alt_recipient: null };
      break;
    case PAYLOAD.CoinbaseToAltRecipient:
      api.tx_type = 'coinbase';
      api.coinbase_payload = { data: normalizeHex(p.payload_buffer), alt_recipient: principalString(p.recipient) };
      break;
    case PAYLOAD.NakamotoCoinbase:
      api.tx_type = 'coinbase';
      api.coinbase_payload = {
        data: normalizeHex(p.payload_buffer),
        alt_recipient: p.recipient ? principalString(p.recipient) : null,
        vrf_proof: normalizeHex(p.vrf_proof),
      };
      break;
    case PAYLOAD.TenureChange:
      api.tx_type = 'tenure_change';
      api.tenure_change_payload = {
        tenure_consensus_hash: normalizeHex(p.tenure_consensus_hash),
        prev_tenure_consensus_hash: normalizeHex(p.prev_tenure_consensus_hash),
        burn_view_consensus_hash: normalizeHex(p.burn_view_consensus_hash),
        previous_tenure_end: normalizeHex(p.previous_tenure_end),
        previous_tenure_blocks: p.previous_tenure_blocks,
        cause: tenureCauseString(p.cause),
        pubkey_hash: normalizeHex(p.pubkey_hash),
      };
      break;
    default:
      throw new Error(`unexpected transaction payload type ${(p as { type_id: number }).type_id}`);
  }

  return {
    txId: api.tx_id,
    rawTx,
    txType: api.tx_type,
    payloadTypeId: p.type_id,
    nonce,
    feeRate,
    senderAddress,
    sponsored,
    sponsorAddress: sponsorCond ? sponsorCond.signer.address : null,
    sponsorNonce: sponsorCond ? Number(sponsorCond.nonce) : null,
    anchorMode,
    postConditionMode,
    tokenTransferRecipient,
    tokenTransferAmount,
    contractCallContractId,
    contractCallFunctionName,
    smartContractContractId,
    smartContractSource,
    byteSize: (rawTx.length - 2) / 2,
    api,
  };
}

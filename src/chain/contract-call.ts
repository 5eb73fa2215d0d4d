// Joins a contract's ABI (the node's `contract_abi` of its deploy tx) into a contract_call tx's JSON.
import { abiTypeToString, clarityTypeName, type ClarityAbiType } from './clarity.js';
import type { TxStaticJson, FunctionArgJson } from './tx.js';

export interface ContractAbiFunction {
  name: string;
  access: 'private' | 'public' | 'read_only' | string;
  args: { name: string; type: ClarityAbiType }[];
  outputs?: { type: ClarityAbiType };
}

/** The parts of a contract ABI used here; other members (maps, variables, tokens…) pass through untouched. */
export interface ContractAbi {
  functions: ContractAbiFunction[];
  [key: string]: unknown;
}

/** "(define-public (transfer (amount uint) (to principal)))", as the reference prints a function. */
export function abiFunctionSignature(fn: ContractAbiFunction): string {
  const access = fn.access === 'read_only' ? 'read-only' : fn.access;
  const args = fn.args.map(a => `(${a.name} ${abiTypeToString(a.type)})`).join(' ');
  return `(define-${access} (${fn.name} ${args}))`;
}

function parseAbi(abi: ContractAbi | string | null | undefined): ContractAbi | null {
  if (abi == null) return null;
  const parsed: unknown = typeof abi === 'string' ? JSON.parse(abi) : abi;
  if (!parsed || typeof parsed !== 'object' || !Array.isArray((parsed as ContractAbi).functions)) return null;
  return parsed as ContractAbi;
}

export interface WithContractAbiOptions {
  /** `exclude_function_args=true`: drop contract_call.function_args. */
  excludeFunctionArgs?: boolean;
}

/**
 * Returns a copy of `api` whose contract_call.function_signature and function_args[i].name/type come
 * from the called contract's ABI (if given and it defines the function); otherwise signature "",
 * names "" and types derived from the values. Non-contract-call txs are returned unchanged (copied).
 * The reference answers 500 when the ABI lacks the function; here that case falls back to no ABI.
 */
export function withContractAbi(
  api: TxStaticJson,
  abi: ContractAbi | string | null | undefined,
  opts: WithContractAbiOptions = {},
): TxStaticJson {
  if (!api.contract_call) return { ...api };
  const call = api.contract_call;
  const parsed = parseAbi(abi);
  const fn = parsed?.functions.find(f => f.name === call.function_name) ?? null;
  const contractCall: TxStaticJson['contract_call'] = {
    contract_id: call.contract_id,
    function_name: call.function_name,
    function_signature: fn ? abiFunctionSignature(fn) : '',
  };
  if (!opts.excludeFunctionArgs && call.function_args) {
    contractCall.function_args = call.function_args.map((a, i): FunctionArgJson => {
      const abiArg = fn?.args[i];
      return {
        hex: a.hex,
        repr: a.repr,
        name: abiArg?.name ?? '',
        type: abiArg ? abiTypeToString(abiArg.type) : clarityTypeName(a.hex),
      };
    });
  }
  return { ...api, contract_call: contractCall };
}

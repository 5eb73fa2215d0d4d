/**
 * Parameter schemas shared by the endpoint declarations. The router (src/api/endpoint.ts) coerces query strings by the
 * shape of these schemas and turns their failures into the reference's messages; a `{label}` in a custom message
 * stands for the parameter (`params/principal`). Every schema carries its OpenAPI description.
 */
import { z } from 'zod';
import { LABEL, REPEATED_ONLY, networkChecked } from '../endpoint.js';
import { codec } from '../../chain/native.js';
import type { BlockRef } from '../../store/blocks.js';
import { ADDRESS_RE, C32_ALPHABET as C32, PRINCIPAL_RE, TX_ID_RE } from '../../chain/principal.js';

/** The reference's schema patterns for a principal (its anyOf of an address and a contract id). */
export const REF_ADDRESS_PATTERN = `^[${C32}]{28,41}`;
export const REF_CONTRACT_PATTERN = `^[${C32}]{28,41}.[a-zA-Z]([a-zA-Z0-9]|[-_]){0,39}$`;
const SHAPE_MESSAGE =
  `${LABEL} must be a Stacks address (S, then P, M, T or N, then 26 to 39 c32 characters: digits and upper-case letters ` +
  'except I, L, O and U) or a contract id (<address>.<contract-name>)';
const ADDRESS_SHAPE_MESSAGE =
  `${LABEL} must be a Stacks address (S, then P, M, T or N, then 26 to 39 c32 characters: digits and upper-case letters ` +
  'except I, L, O and U); a contract id is not accepted here';

/**
 * What is wrong with a principal parameter, in plain words with `{label}` for the parameter; undefined when it is a
 * real principal: a c32 address whose checksum matches, optionally `.<contract-name>`. A well-formed address whose
 * checksum does not match (a mistyped character) is refused as such, not answered as an empty account.
 */
export function principalProblem(s: string, opts: { contract?: boolean } = {}): string | undefined {
  const allowContract = opts.contract ?? true;
  const shapeOk = allowContract ? PRINCIPAL_RE.test(s) : ADDRESS_RE.test(s);
  if (!shapeOk) return allowContract ? SHAPE_MESSAGE : ADDRESS_SHAPE_MESSAGE;
  const address = s.split('.')[0];
  let valid = false;
  try {
    valid = codec.isValidStacksAddress(address);
  } catch {
    valid = false;
  }
  if (!valid) return `${LABEL} is not a valid Stacks address: its c32 checksum does not match (${address} is mistyped or truncated)`;
  return undefined;
}

/** A string schema refused with principalProblem's message, its network checked against the database's. */
export function principalSchema(opts: { contract?: boolean } = {}) {
  return networkChecked(
    z.string().superRefine((s, ctx) => {
      const problem = principalProblem(s, opts);
      if (problem) ctx.addIssue({ code: 'custom', message: problem, input: s });
    }),
  );
}

export const HASH_RE = /^(0x)?[a-fA-F0-9]{64}$/;

/** `0x`-prefixed lower case. */
export function normalizeHash(raw: string): string {
  return (raw.startsWith('0x') ? raw : '0x' + raw).toLowerCase();
}

// ---- paging --------------------------------------------------------------------------------------------------------

/** `limit`: 0 or absent → the default; over the maximum → 400. */
export function Limit(def: number, max: number) {
  return z
    .int()
    .min(0)
    .max(max)
    .default(def)
    .transform((v) => v || def)
    .describe(`Page size (0 or absent: ${def}; more than ${max}: 400)`);
}

export function Offset(opts: { min?: number; max?: number } = {}) {
  let s = z.int().min(opts.min ?? 0);
  if (opts.max !== undefined) s = s.max(opts.max);
  return s.default(0).describe('Index of the first item (an offset past the end gives an empty page)');
}

/** The `cursor` of the v2 block pages: the index block hash of the page's anchor block. */
export function blockPageCursor() {
  return z
    .string()
    .regex(/^0x[a-fA-F0-9]{64}$/)
    .optional()
    .describe('Index block hash of the page anchor (default: the chain tip); an unknown cursor is a 404');
}

/** `limit` + `offset` with an endpoint's default and maximum. */
export function paging(def: number, max: number, offset: { min?: number; max?: number } = {}) {
  return { limit: Limit(def, max), offset: Offset(offset) };
}

// ---- scalars -------------------------------------------------------------------------------------------------------

/** true/false (1/0 accepted, as the reference's coercion does). */
export const Bool = (def = false) => z.boolean().default(def);

export const Unanchored = Bool().describe(
  'Include data of unconfirmed (unanchored) microblocks (`true`/`false`; `1`/`0` accepted too)',
);
export const ExcludeFunctionArgs = Bool().describe('Leave out `contract_call.function_args`');

/** A non-negative integer (heights, cycle numbers). */
export const Height = z.int().min(0);

/** A 32-byte hash, `0x` optional, any case; handed on as written. */
export const HashParam = z.string().regex(HASH_RE);

/** A tx id as written (`0x` optional, any case): handlers that redirect the bare form need the raw value. */
export const TxIdParam = z.string().regex(TX_ID_RE).describe('Transaction id; hex in any case, `0x` optional');

/** A tx id, normalized to `0x` lower case. */
export const TxId = TxIdParam.transform(normalizeHash);

/** A standard or contract principal (checksum and network checked). */
export const PrincipalParam = networkChecked(
  principalSchema().describe('A Stacks address (`SP…`, `ST…`) or a contract identifier `<address>.<contract-name>`'),
);

/**
 * A principal on the routes where the reference checked a loose pattern first and then a real principal: both are
 * one check here, in plain words (`_semantic`, the reference's second message, is kept for the declarations' sake).
 */
export function LoosePrincipalParam(_semantic: string) {
  return networkChecked(
    principalSchema().describe('A Stacks address (`SP…`, `ST…`) or a contract identifier `<address>.<contract-name>`'),
  );
}

export const ContractIdParam = z
  .string()
  .describe('Contract identifier `<address>.<contract-name>`');

/** `height_or_hash`: `latest`, a height, or a block hash / index block hash (`0x` optional). */
const HEIGHT_OR_HASH_MESSAGE =
  `${LABEL} must be equal to constant, ${LABEL} must match pattern "^(0x)?[a-fA-F0-9]{64}$", ${LABEL} must be integer, ` +
  `${LABEL} must match a schema in anyOf`;
export const HeightOrHash = z
  .union(
    [
      z.literal('latest'),
      z.int().min(0, { error: `${LABEL} must be a block height >= 0 or a block hash (Invalid block height or hash)` }),
      z.string().regex(HASH_RE, { error: HEIGHT_OR_HASH_MESSAGE }),
    ],
    { error: (iss) => (iss.code === 'invalid_union' ? HEIGHT_OR_HASH_MESSAGE : undefined) },
  )
  .describe('`latest`, a block height, or a block hash or index block hash (64 hex digits, `0x` optional)');

export function blockRef(v: 'latest' | number | string): BlockRef {
  if (v === 'latest') return { latest: true };
  if (typeof v === 'number') return { height: v };
  return { hash: normalizeHash(v) };
}

/**
 * A list query parameter: repeated (`?x=a&x=b`) and/or comma-separated; with `{ repeatedOnly: true }` repeated only
 * (a comma stays in the value, which its item schema then judges).
 */
export function List<T extends z.ZodType>(item: T, opts: { repeatedOnly?: boolean } = {}) {
  if (opts.repeatedOnly) REPEATED_ONLY.add(item);
  return z.array(item);
}

/**
 * Building blocks of the REST API's zod schemas. Every schema registered with `component()` becomes a named
 * `#/components/schemas/<Name>` in the OpenAPI document (src/api/openapi.ts); anything else is inlined.
 */
import { z } from 'zod';
import { ADDRESS_PATTERN, CONTRACT_ID_PATTERN, PRINCIPAL_PATTERN } from '../../chain/principal.js';

/** The registry of named OpenAPI components (private: not zod's global registry). */
export const components = z.registry<{ id: string }>();

/** Registers `schema` as the component `name` and returns it. */
export function component<T extends z.ZodType>(name: string, schema: T): T {
  components.add(schema, { id: name });
  return schema;
}


/** A 32-byte hash: lower-case 0x hex. */
export const Hash = z.string().regex(/^0x[0-9a-f]{64}$/);
/** A 32-byte hash, or `0x` where there is none (e.g. the block hash of an unanchored microblock tx). */
export const HashOrEmpty = z.string().regex(/^0x([0-9a-f]{64})?$/);
/** Lower-case 0x hex of any length. */
export const Hex = z.string().regex(/^0x[0-9a-f]*$/);
export const TxId = Hash.describe('Transaction id (0x-prefixed lower-case hex)');
/** A non-negative integer amount as a decimal string (micro-STX or token base units). */
export const Amount = z.string().regex(/^\d+$/);
/** A signed integer as a decimal string (a balance reckoned from partial chain data can be negative). */
export const SignedAmount = z.string().regex(/^-?\d+$/);
export const StacksAddress = z.string().regex(new RegExp(ADDRESS_PATTERN));
export const Principal = z.string().regex(new RegExp(PRINCIPAL_PATTERN));
/** A principal, or '' where the reference prints an empty one (the sender of a mint, the recipient of a burn). */
export const PrincipalOrEmpty = z.union([Principal, z.literal('')]);
export const ContractId = z.string().regex(new RegExp(CONTRACT_ID_PATTERN));
/** ISO-8601 time as `Date.toISOString()` prints it. */
export const IsoTime = z.iso.datetime();
/** ISO time, or '' where the reference prints an empty one (a zero time). */
export const IsoTimeOrEmpty = z.union([z.iso.datetime(), z.literal('')]);
/** Unix time in seconds. */
export const UnixTime = z.int().min(0);
export const Height = z.int().min(0);
export const Count = z.int().min(0);

export const ClarityValue = component(
  'ClarityValue',
  z
    .object({
      hex: Hex.describe('consensus-serialized Clarity value'),
      repr: z.string().describe('Clarity representation, e.g. `(ok true)`'),
    })
    .describe('A Clarity value'),
);

export const ErrorResponse = component(
  'Error',
  z
    .object({
      statusCode: z.int().min(400).max(599),
      error: z.string().describe('HTTP reason phrase'),
      message: z.string().describe('what was wrong, naming the parameter for a 400'),
    })
    .describe('Every error answer: `{statusCode, error, message}`'),
);

/** Query parameter schemas shared by many routes (documentation of what the handlers in src/api/params.ts accept). */
export function limitParam(def: number, max: number) {
  return z
    .int()
    .min(0)
    .max(max)
    .default(def)
    .describe(`Page size (0 or absent: ${def}; more than ${max}: 400)`);
}

export function offsetParam(opts: { min?: number; max?: number } = {}) {
  let s = z.int().min(opts.min ?? 0);
  if (opts.max !== undefined) s = s.max(opts.max);
  return s.default(0).describe('Index of the first item (an offset past the end gives an empty page)');
}

export const unanchoredParam = z
  .boolean()
  .default(false)
  .describe('Include data of unconfirmed (unanchored) microblocks (`true`/`false`; `1`/`0` accepted too)');

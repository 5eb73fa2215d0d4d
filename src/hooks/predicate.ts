/**
 * Hook specifications in the JSON shape Chainhook users write for Stacks: `{chain: "stacks", uuid, name, version,
 * networks: {mainnet|testnet: {if_this, then_that, start_block, end_block, expire_after_occurrence, …}}}`.
 * Validated with zod; a bad field is reported by its path (`body/networks/mainnet/if_this/scope …`).
 */
import { z } from 'zod';
import { RE2JS } from 're2js';

const ContractId = z.string().regex(/^S[0-9A-Z]{27,40}\.[a-zA-Z]([a-zA-Z0-9_-]){0,127}$/, 'must be a contract identifier (ADDRESS.name)');
const Principal = z.string().regex(/^S[0-9A-Z]{27,40}(\.[a-zA-Z]([a-zA-Z0-9_-]){0,127})?$/, 'must be a Stacks principal');
const AssetId = z.string().regex(/^S[0-9A-Z]{27,40}\.[a-zA-Z]([a-zA-Z0-9_-]){0,127}::[^\s]{1,128}$/, 'must be an asset identifier (ADDRESS.contract::asset)');
const Height = z.number().int().min(0);
const TokenAction = z.enum(['mint', 'transfer', 'burn']);
const StxAction = z.enum(['mint', 'transfer', 'lock', 'burn']);

/** A regex the linear-time engine accepts (no backreferences or lookarounds: no catastrophic backtracking). */
const SafeRegex = z
  .string()
  .min(1)
  .max(512)
  .superRefine((s, ctx) => {
    try {
      RE2JS.compile(s);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `must be a regular expression without backreferences or lookarounds (${(err as Error).message})` });
    }
  });

export const IfThis = z.discriminatedUnion('scope', [
  z.object({ scope: z.literal('txid'), equals: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 64-hex tx id') }).strict(),
  z
    .object({
      scope: z.literal('block_height'),
      equals: Height.optional(),
      higher_than: Height.optional(),
      lower_than: Height.optional(),
      between: z.tuple([Height, Height]).optional(),
    })
    .strict()
    .refine((p) => [p.equals, p.higher_than, p.lower_than, p.between].filter((v) => v !== undefined).length === 1, {
      message: 'needs exactly one of equals, higher_than, lower_than, between',
    }),
  z.object({ scope: z.literal('contract_call'), contract_identifier: ContractId, method: z.string().min(1).max(128) }).strict(),
  z
    .object({
      scope: z.literal('contract_deployment'),
      deployer: z.union([z.literal('*'), Principal]).optional(),
      implement_trait: z.enum(['sip09', 'sip10', '*']).optional(),
    })
    .strict()
    .refine((p) => (p.deployer === undefined) !== (p.implement_trait === undefined), { message: 'needs exactly one of deployer, implement_trait' }),
  z
    .object({
      scope: z.literal('print_event'),
      contract_identifier: z.union([z.literal('*'), ContractId]),
      contains: z.string().max(512).optional(),
      matches_regex: SafeRegex.optional(),
    })
    .strict()
    .refine((p) => !(p.contains !== undefined && p.matches_regex !== undefined), { message: 'takes contains or matches_regex, not both' }),
  z.object({ scope: z.literal('ft_event'), asset_identifier: AssetId, actions: z.array(TokenAction).min(1) }).strict(),
  z.object({ scope: z.literal('nft_event'), asset_identifier: AssetId, actions: z.array(TokenAction).min(1) }).strict(),
  z.object({ scope: z.literal('stx_event'), actions: z.array(StxAction).min(1) }).strict(),
]);
export type IfThis = z.infer<typeof IfThis>;

const HttpPost = z
  .object({
    url: z
      .string()
      .max(2048)
      .superRefine((s, ctx) => {
        let u: URL;
        try {
          u = new URL(s);
        } catch {
          ctx.addIssue({ code: 'custom', message: 'must be an absolute http(s) URL' });
          return;
        }
        if (u.protocol !== 'http:' && u.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: 'must be an http or https URL' });
        if (u.username || u.password) ctx.addIssue({ code: 'custom', message: 'must not carry credentials (use authorization_header)' });
      }),
    authorization_header: z.string().max(4096).optional(),
  })
  .strict();

export const NetworkSpec = z
  .object({
    if_this: IfThis,
    then_that: z.object({ http_post: HttpPost }).strict(),
    start_block: Height.optional(),
    end_block: Height.optional(),
    expire_after_occurrence: z.number().int().min(1).optional(),
    decode_clarity_values: z.boolean().optional(),
    include_contract_abi: z.boolean().optional(),
    include_proof: z.boolean().optional(),
    include_contract_source_code: z.boolean().optional(),
    capture_all_events: z.boolean().optional(),
  })
  .strict()
  .refine((n) => n.start_block === undefined || n.end_block === undefined || n.start_block <= n.end_block, {
    message: 'start_block must not be above end_block',
    path: ['end_block'],
  });
export type NetworkSpec = z.infer<typeof NetworkSpec>;

export const HookSpec = z
  .object({
    chain: z.literal('stacks'),
    uuid: z.string().regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'must be a UUID').optional(),
    name: z.string().min(1).max(200),
    version: z.number().int().min(1).optional(),
    networks: z
      .object({ mainnet: NetworkSpec.optional(), testnet: NetworkSpec.optional() })
      .strict()
      .refine((n) => n.mainnet !== undefined || n.testnet !== undefined, { message: 'needs mainnet or testnet' }),
  })
  .strict();
export type HookSpec = z.infer<typeof HookSpec>;

/** The options of a stored hook, as the evaluator and the payload builder need them. */
export interface HookPredicate {
  if_this: IfThis;
  start_block?: number;
  end_block?: number;
  expire_after_occurrence?: number;
  decode_clarity_values?: boolean;
  include_contract_abi?: boolean;
}

/** What is stored of a network spec: everything but then_that (the URL and header live in their own columns). */
export function storedPredicate(n: NetworkSpec): HookPredicate {
  const { then_that: _t, ...rest } = n;
  return rest;
}

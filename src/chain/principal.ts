/**
 * The shapes of Stacks principals and transaction ids: what the REST parameters, the push room names and the JSON-RPC
 * channel accept. Shape only (a c32 checksum is checked where a parameter is parsed, src/api/schemas/params.ts).
 */
/** The c32 alphabet (Crockford base32: no I, L, O, U). */
export const C32_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const C32_CLASS = '0-9A-HJKMNP-TV-Z';
const CONTRACT_NAME = '[a-zA-Z]([a-zA-Z0-9]|[-_]){0,127}';

export const ADDRESS_PATTERN = `^S[PMTN][${C32_CLASS}]{26,39}$`;
export const PRINCIPAL_PATTERN = `^S[PMTN][${C32_CLASS}]{26,39}(\\.${CONTRACT_NAME})?$`;
export const CONTRACT_ID_PATTERN = `^S[PMTN][${C32_CLASS}]{26,39}\\.${CONTRACT_NAME}$`;

export const ADDRESS_RE = new RegExp(ADDRESS_PATTERN);
export const PRINCIPAL_RE = new RegExp(PRINCIPAL_PATTERN);
export const CONTRACT_RE = new RegExp(CONTRACT_ID_PATTERN);
export const TX_ID_RE = /^(0x)?[a-fA-F0-9]{64}$/;

export const isStacksAddress = (s: string): boolean => ADDRESS_RE.test(s);
export const isPrincipal = (s: string): boolean => PRINCIPAL_RE.test(s);
export const isContractId = (s: string): boolean => CONTRACT_RE.test(s);

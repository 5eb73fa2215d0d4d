/** The contract every generated deploy uses (FT, NFT, print), and its ABI as the node reports it. */
export const CONTRACT_SOURCE = `;; stacks-pulse synthetic chain contract
(define-fungible-token pulse-token)
(define-non-fungible-token pulse-nft uint)
(define-data-var counter uint u0)
(define-public (ping (n uint))
  (begin
    (asserts! (> n u0) (err u1))
    (var-set counter (+ (var-get counter) n))
    (print {event: "ping", n: n, sender: tx-sender})
    (ok (var-get counter))))
(define-public (mint-ft (amount uint) (recipient principal)) (ft-mint? pulse-token amount recipient))
(define-public (transfer-ft (amount uint) (recipient principal)) (ft-transfer? pulse-token amount tx-sender recipient))
(define-public (mint-nft (id uint) (recipient principal)) (nft-mint? pulse-nft id recipient))
(define-public (transfer-nft (id uint) (recipient principal)) (nft-transfer? pulse-nft id tx-sender recipient))
(define-read-only (get-counter) (var-get counter))
`;

const RESP_BOOL = { response: { ok: 'bool', error: 'uint128' } };
/** The ABI as the node reports it in `contract_abi`. */
export const CONTRACT_ABI = {
  functions: [
    { name: 'mint-ft', access: 'public', args: [{ name: 'amount', type: 'uint128' }, { name: 'recipient', type: 'principal' }], outputs: { type: RESP_BOOL } },
    { name: 'mint-nft', access: 'public', args: [{ name: 'id', type: 'uint128' }, { name: 'recipient', type: 'principal' }], outputs: { type: RESP_BOOL } },
    { name: 'ping', access: 'public', args: [{ name: 'n', type: 'uint128' }], outputs: { type: { response: { ok: 'uint128', error: 'uint128' } } } },
    { name: 'transfer-ft', access: 'public', args: [{ name: 'amount', type: 'uint128' }, { name: 'recipient', type: 'principal' }], outputs: { type: RESP_BOOL } },
    { name: 'transfer-nft', access: 'public', args: [{ name: 'id', type: 'uint128' }, { name: 'recipient', type: 'principal' }], outputs: { type: RESP_BOOL } },
    { name: 'get-counter', access: 'read_only', args: [], outputs: { type: 'uint128' } },
  ],
  variables: [{ name: 'counter', type: 'uint128', access: 'variable' }],
  maps: [],
  fungible_tokens: [{ name: 'pulse-token' }],
  non_fungible_tokens: [{ name: 'pulse-nft', type: 'uint128' }],
  epoch: 'Epoch25',
  clarity_version: 'Clarity2',
};

-- /extended/v3/principals/{principal}/balances/ft and /balances/nft (src/store/principals-v3.ts): keyset
-- pages of a principal's holdings in the reference's orders, so a page reads only its rows instead of sorting every
-- token the principal holds.
--   FT:  balance DESC, asset_identifier ASC   over the positive balances (ft_balances, sql/0045_token_tables.sql)
--   NFT: asset_identifier ASC, value ASC      over the instances it owns (nft_custody)
-- Identifiers compare byte-wise (COLLATE "C"): the cursors name them, and a page must not depend on the server's locale.
CREATE INDEX IF NOT EXISTS ft_balances_principal_v3
  ON ft_balances (principal, balance DESC, asset_identifier COLLATE "C") WHERE balance > 0;
CREATE INDEX IF NOT EXISTS nft_custody_owner_v3
  ON nft_custody (owner, asset_identifier COLLATE "C", value_hex COLLATE "C") WHERE owner IS NOT NULL;

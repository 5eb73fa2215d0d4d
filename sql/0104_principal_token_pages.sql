-- /extended/v2/addresses/{principal}/balances/ft: a page of a principal's positive FT balances in the
-- reference's order (token name case-insensitively, then as stored) read from an index in that order, instead of
-- sorting every token the principal holds (24 ms for a principal of 5,028 tokens on the 100,000-block chain). The
-- expressions use the database's default collation, as the query's ORDER BY does.
CREATE INDEX IF NOT EXISTS ft_balances_principal_name
  ON ft_balances (principal, lower(asset_identifier), asset_identifier) WHERE balance > 0;

-- Counts that were taken over a principal's or a token's whole ft_balances rows on every request:
--   * the number of FT balances a principal holds (> 0), the `total` of /extended/v2/addresses/{p}/balances/ft and of
--     /extended/v3/principals/{p}/balances/ft (5,028 rows counted per page for the busiest principal of the
--     100,000-block chain: 4 → 11 ms);
--   * a token's holders (every ft_balances row of it, zero balances included, as the reference counts) and its supply
--     (their sum), the `total` and `total_supply` of /extended/v1/tokens/ft/{token}/holders.
-- Both are written by a row trigger on ft_balances, so they follow whatever writes balances (one message at a time,
-- projector batches, the backfills) without a rule of their own; a row whose figures fall to zero is deleted, so two
-- ingests that reach the same balances by different paths also have the same counts.
CREATE TABLE IF NOT EXISTS ft_principal_counts (
  principal text   PRIMARY KEY,
  positive  bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS ft_token_totals (
  asset_identifier text    PRIMARY KEY,
  holders          bigint  NOT NULL,
  supply           numeric NOT NULL
);

CREATE OR REPLACE FUNCTION ft_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_old_pos integer := 0;
  v_new_pos integer := 0;
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    v_old_pos := CASE WHEN OLD.balance > 0 THEN 1 ELSE 0 END;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    v_new_pos := CASE WHEN NEW.balance > 0 THEN 1 ELSE 0 END;
  END IF;
  IF TG_OP = 'UPDATE' AND OLD.principal = NEW.principal AND OLD.asset_identifier = NEW.asset_identifier THEN
    IF v_new_pos <> v_old_pos THEN
      INSERT INTO ft_principal_counts AS c (principal, positive) VALUES (NEW.principal, v_new_pos - v_old_pos)
      ON CONFLICT (principal) DO UPDATE SET positive = c.positive + EXCLUDED.positive;
      DELETE FROM ft_principal_counts WHERE principal = NEW.principal AND positive = 0;
    END IF;
    IF NEW.balance <> OLD.balance THEN
      UPDATE ft_token_totals SET supply = supply + (NEW.balance - OLD.balance) WHERE asset_identifier = NEW.asset_identifier;
    END IF;
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    IF v_old_pos = 1 THEN
      UPDATE ft_principal_counts SET positive = positive - 1 WHERE principal = OLD.principal;
      DELETE FROM ft_principal_counts WHERE principal = OLD.principal AND positive = 0;
    END IF;
    UPDATE ft_token_totals SET holders = holders - 1, supply = supply - OLD.balance WHERE asset_identifier = OLD.asset_identifier;
    DELETE FROM ft_token_totals WHERE asset_identifier = OLD.asset_identifier AND holders = 0;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    IF v_new_pos = 1 THEN
      INSERT INTO ft_principal_counts AS c (principal, positive) VALUES (NEW.principal, 1)
      ON CONFLICT (principal) DO UPDATE SET positive = c.positive + 1;
    END IF;
    INSERT INTO ft_token_totals AS t (asset_identifier, holders, supply) VALUES (NEW.asset_identifier, 1, NEW.balance)
    ON CONFLICT (asset_identifier) DO UPDATE SET holders = t.holders + 1, supply = t.supply + EXCLUDED.supply;
  END IF;
  RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS ft_counts_track ON ft_balances;
-- backfill (an existing database) before the trigger counts anything, in the migration's transaction
TRUNCATE ft_principal_counts, ft_token_totals;
INSERT INTO ft_principal_counts (principal, positive)
SELECT principal, count(*) FROM ft_balances WHERE balance > 0 GROUP BY principal;
INSERT INTO ft_token_totals (asset_identifier, holders, supply)
SELECT asset_identifier, count(*), sum(balance) FROM ft_balances GROUP BY asset_identifier;
CREATE TRIGGER ft_counts_track AFTER INSERT OR UPDATE OR DELETE ON ft_balances
  FOR EACH ROW EXECUTE FUNCTION ft_counts_track();

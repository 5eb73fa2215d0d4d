-- /extended/v1/tokens/nft/holdings cost more to plan than to run. PostgreSQL planned its statement again on
-- every request (1.2–2.6 ms to bind, then 0.2–0.8 ms to run), mostly for the unconfirmed-stream part: a
-- join of events and txs whose 18 and 23 indexes the planner weighs each time. A generic plan is right for it (it looks
-- rows up by owner, by asset key and in the unanchored partial indexes, whatever the values), but postgres.js cannot set
-- a plan mode for one statement, and a transaction around it costs the round trips it saves (measured).
-- A plpgsql function keeps each statement's plan for the connection's life; with `plan_cache_mode` set on the function
-- the plan is generic from the first call. The same request runs in 0.3 ms instead of 1.4 (psql, 1,000-block chain).
--
-- The rule "the owner each NFT has after the unconfirmed microblock stream" is now this view, the one place it is
-- written: the holdings, the v3 NFT pages and BNS read it (src/store/tokens.ts unconfirmedNftOwners).
CREATE OR REPLACE VIEW nft_unconfirmed_owners AS
  SELECT DISTINCT ON (e.asset_identifier, e.value_hex)
    e.asset_identifier, e.value_hex, e.recipient AS owner, e.tx_id, e.block_height, t.microblock_sequence, e.tx_index,
    e.event_index
  FROM events e
  JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash
  WHERE e.index_block_hash = '' AND e.event_type = 'non_fungible_token_asset' AND e.canonical AND e.microblock_canonical
  ORDER BY e.asset_identifier, e.value_hex, e.block_height DESC, t.microblock_sequence DESC, e.tx_index DESC,
    e.event_index DESC;

-- How many NFTs p_principal holds (of the classes p_assets, when it names any): the maintained custody count per owner
-- (nft_owner_totals, sql/0114) or per owner and class (nft_owner_counts, sql/0107), less the principal's custody rows
-- the unconfirmed stream overrides, plus the stream's rows that name it.
CREATE OR REPLACE FUNCTION nft_held_count(p_principal text, p_assets text[]) RETURNS integer
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
DECLARE v integer;
BEGIN
  IF COALESCE(cardinality(p_assets), 0) = 0 THEN
    WITH mb AS MATERIALIZED (SELECT * FROM nft_unconfirmed_owners)
    SELECT (SELECT COALESCE(max(o.n), 0) FROM nft_owner_totals o WHERE o.owner = p_principal)
      - (SELECT count(*) FROM mb JOIN nft_custody c ON c.asset_identifier = mb.asset_identifier AND c.value_hex = mb.value_hex
         WHERE c.owner = p_principal)
      + (SELECT count(*) FROM mb WHERE mb.owner = p_principal)
    INTO v;
  ELSE
    WITH mb AS MATERIALIZED (SELECT * FROM nft_unconfirmed_owners)
    SELECT (SELECT COALESCE(sum(o.n), 0) FROM nft_owner_counts o WHERE o.owner = p_principal AND o.asset_identifier = ANY(p_assets))
      - (SELECT count(*) FROM mb JOIN nft_custody c ON c.asset_identifier = mb.asset_identifier AND c.value_hex = mb.value_hex
         WHERE c.owner = p_principal AND c.asset_identifier = ANY(p_assets))
      + (SELECT count(*) FROM mb WHERE mb.owner = p_principal AND mb.asset_identifier = ANY(p_assets))
    INTO v;
  END IF;
  RETURN v;
END
$$;

-- A page of the NFTs p_principal holds (of the classes p_assets, when it names any), newest acquisition first:
-- nft_custody (canonical anchored chain) where the unconfirmed stream does not override it, and the stream's rows that
-- name the principal. Only the newest p_limit + p_offset custody rows are read (nft_custody_owner order). `total` is
-- nft_held_count on every row. The limit and offset are bigint: an offset can be any safe integer (an empty page).
CREATE OR REPLACE FUNCTION nft_holdings_page(p_principal text, p_assets text[], p_limit bigint, p_offset bigint)
RETURNS TABLE (asset_identifier text, value_hex text, block_height integer, tx_id text, total integer)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
  v_total integer := nft_held_count(p_principal, p_assets);
BEGIN
  -- two statements, each with its own plan: all of the principal's NFTs, or those of the named classes
  IF COALESCE(cardinality(p_assets), 0) = 0 THEN
    RETURN QUERY
      WITH mb AS MATERIALIZED (SELECT * FROM nft_unconfirmed_owners), top AS (
        SELECT c.asset_identifier, c.value_hex, c.tx_id, c.block_height, 2147483647 AS microblock_sequence, c.tx_index,
          c.event_index
        FROM nft_custody c
        WHERE c.owner = p_principal
          AND NOT EXISTS (SELECT 1 FROM mb WHERE mb.asset_identifier = c.asset_identifier AND mb.value_hex = c.value_hex)
        ORDER BY c.block_height DESC, c.tx_index DESC, c.event_index DESC
        LIMIT p_limit + p_offset
      ), held AS (
        SELECT * FROM top
        UNION ALL
        SELECT mb.asset_identifier, mb.value_hex, mb.tx_id, mb.block_height, mb.microblock_sequence, mb.tx_index,
          mb.event_index
        FROM mb WHERE mb.owner = p_principal
      )
      SELECT h.asset_identifier, h.value_hex, h.block_height::integer, h.tx_id, v_total
      FROM held h
      ORDER BY h.block_height DESC, h.microblock_sequence DESC, h.tx_index DESC, h.event_index DESC
      LIMIT p_limit OFFSET p_offset;
  ELSE
    RETURN QUERY
      WITH mb AS MATERIALIZED (SELECT * FROM nft_unconfirmed_owners), top AS (
        SELECT c.asset_identifier, c.value_hex, c.tx_id, c.block_height, 2147483647 AS microblock_sequence, c.tx_index,
          c.event_index
        FROM nft_custody c
        WHERE c.owner = p_principal AND c.asset_identifier = ANY(p_assets)
          AND NOT EXISTS (SELECT 1 FROM mb WHERE mb.asset_identifier = c.asset_identifier AND mb.value_hex = c.value_hex)
        ORDER BY c.block_height DESC, c.tx_index DESC, c.event_index DESC
        LIMIT p_limit + p_offset
      ), held AS (
        SELECT * FROM top
        UNION ALL
        SELECT mb.asset_identifier, mb.value_hex, mb.tx_id, mb.block_height, mb.microblock_sequence, mb.tx_index,
          mb.event_index
        FROM mb WHERE mb.owner = p_principal AND mb.asset_identifier = ANY(p_assets)
      )
      SELECT h.asset_identifier, h.value_hex, h.block_height::integer, h.tx_id, v_total
      FROM held h
      ORDER BY h.block_height DESC, h.microblock_sequence DESC, h.tx_index DESC, h.event_index DESC
      LIMIT p_limit OFFSET p_offset;
  END IF;
END
$$;

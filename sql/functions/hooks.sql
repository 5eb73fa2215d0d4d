-- History (backfill) of a hook, built in the database: the payload block of each matching block, exactly as
-- src/hooks/payload.ts builds it (chainhookTx, chainhookEvent, chainhookBlock), so a history chunk is one
-- INSERT … SELECT instead of reading every matching tx and event into the service, building the JSON there and sending
-- it back (src/store/hooks.ts insertHistoryDeliveries).
--
-- The pieces are JSON text, put together by concatenation: hook_deliveries.block is `json` (kept as written), so a
-- payload is validated once when inserted and never parsed into a tree or re-serialised. Keys come in the order
-- payload.ts writes them; a key payload.ts leaves out (undefined) is left out here (a NULL piece, skipped by
-- concat_ws), while a JSON null is kept. The JSON the stored rows carry (`api` columns) is read with
-- json_extract_path, one scan of the text, and copied as it is. test/hooks-history.test.ts checks both builders give
-- byte-identical payloads.

DROP FUNCTION IF EXISTS hook_event_payload(integer, text, text, text, text, text, text, text, numeric, text, text, bigint, jsonb, boolean);
DROP FUNCTION IF EXISTS hook_tx_kind(text, text, text, jsonb);

-- a value as JSON text, SQL NULL as JSON null
CREATE OR REPLACE FUNCTION hook_json_text(v anyelement) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT COALESCE(to_json(v)::text, 'null')
$$;

-- one event of a tx's receipt, as JSON text (a single expression, so the planner inlines it)
CREATE OR REPLACE FUNCTION hook_event_text(
  event_index integer, event_type text, asset_event_type text, asset_identifier text, contract_id text, topic text,
  sender text, recipient text, amount numeric, value_hex text, locked_address text, unlock_height bigint, api json,
  decode boolean
) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT '{"type":' || to_json(CASE event_type
      WHEN 'smart_contract_log' THEN 'SmartContractEvent'
      WHEN 'stx_asset' THEN 'STX' || CASE asset_event_type WHEN 'mint' THEN 'Mint' WHEN 'burn' THEN 'Burn' ELSE 'Transfer' END || 'Event'
      WHEN 'stx_lock' THEN 'STXLockEvent'
      WHEN 'fungible_token_asset' THEN 'FT' || CASE asset_event_type WHEN 'mint' THEN 'Mint' WHEN 'burn' THEN 'Burn' ELSE 'Transfer' END || 'Event'
      WHEN 'non_fungible_token_asset' THEN 'NFT' || CASE asset_event_type WHEN 'mint' THEN 'Mint' WHEN 'burn' THEN 'Burn' ELSE 'Transfer' END || 'Event'
      ELSE event_type END)::text
    || ',"data":' || CASE event_type
      WHEN 'smart_contract_log' THEN '{' || concat_ws(',',
          '"contract_identifier":' || hook_json_text(contract_id),
          '"topic":' || hook_json_text(topic),
          '"raw_value":' || COALESCE(to_json(value_hex)::text, json_extract_path(api, 'contract_log', 'value', 'hex')::text),
          CASE WHEN decode AND json_typeof(json_extract_path(api, 'contract_log', 'value', 'repr')) = 'string'
               THEN '"value":' || json_extract_path(api, 'contract_log', 'value', 'repr')::text END) || '}'
      WHEN 'stx_asset' THEN '{' || concat_ws(',',
          '"sender":' || to_json(sender)::text,
          '"recipient":' || to_json(recipient)::text,
          '"amount":' || hook_json_text(amount::text),
          '"memo":' || json_extract_path(api, 'asset', 'memo')::text) || '}'
      WHEN 'stx_lock' THEN
        '{"locked_amount":' || hook_json_text(amount::text) || ',"unlock_height":' || hook_json_text(unlock_height::text)
        || ',"locked_address":' || hook_json_text(locked_address) || '}'
      WHEN 'fungible_token_asset' THEN '{' || concat_ws(',',
          '"asset_identifier":' || hook_json_text(asset_identifier),
          '"sender":' || to_json(NULLIF(sender, ''))::text,
          '"recipient":' || to_json(NULLIF(recipient, ''))::text,
          '"amount":' || hook_json_text(amount::text)) || '}'
      WHEN 'non_fungible_token_asset' THEN '{' || concat_ws(',',
          '"asset_identifier":' || hook_json_text(asset_identifier),
          '"sender":' || to_json(NULLIF(sender, ''))::text,
          '"recipient":' || to_json(NULLIF(recipient, ''))::text,
          '"raw_value":' || COALESCE(to_json(value_hex)::text, json_extract_path(api, 'asset', 'value', 'hex')::text),
          CASE WHEN decode AND json_typeof(json_extract_path(api, 'asset', 'value', 'repr')) = 'string'
               THEN '"value":' || json_extract_path(api, 'asset', 'value', 'repr')::text END) || '}'
      ELSE api::text END
    || ',"position":{"index":' || event_index || '}}'
$$;

-- the `kind` of a tx, as JSON text
CREATE OR REPLACE FUNCTION hook_tx_kind_text(tx_type text, contract_call_contract_id text, smart_contract_contract_id text, api json)
RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE tx_type
    WHEN 'contract_call' THEN (
      SELECT '{"type":"ContractCall","data":{' || concat_ws(',',
          '"contract_identifier":' || hook_json_text(contract_call_contract_id),
          '"method":' || json_extract_path(c.c, 'function_name')::text,
          '"args":[' || COALESCE((SELECT string_agg(COALESCE(json_extract_path(a.v, 'repr')::text, 'null'), ',' ORDER BY a.i)
                                 FROM json_array_elements(CASE WHEN json_typeof(json_extract_path(c.c, 'function_args')) = 'array'
                                                               THEN json_extract_path(c.c, 'function_args') ELSE '[]'::json END)
                                      WITH ORDINALITY AS a(v, i)), '') || ']') || '}}'
      FROM (SELECT json_extract_path(api, 'contract_call') AS c) c)
    WHEN 'smart_contract' THEN '{"type":"ContractDeployment","data":{"contract_identifier":' || hook_json_text(smart_contract_contract_id) || '}}'
    ELSE '{"type":' || to_json(CASE tx_type WHEN 'token_transfer' THEN 'NativeTokenTransfer' WHEN 'coinbase' THEN 'Coinbase'
                                 WHEN 'tenure_change' THEN 'TenureChange' WHEN 'poison_microblock' THEN 'Unsupported' ELSE tx_type END)::text || '}'
  END
$$;

-- History (backfill) of a hook, built in the database: the payload block of each matching block, exactly as
-- src/hooks/payload.ts builds it (chainhookTx, chainhookEvent, chainhookBlock), so a history chunk is one
-- INSERT … SELECT instead of reading every matching tx and event into the service, building the JSON there and sending
-- it back (src/store/hooks.ts insertHistoryDeliveries). Keys a payload leaves out (undefined in payload.ts) are left
-- out here too (SQL NULL → no key), while JSON nulls are kept. test/hooks-history.test.ts checks both builders give
-- the same payloads.

-- one event of a tx's receipt (a single expression, so the planner inlines it)
CREATE OR REPLACE FUNCTION hook_event_payload(
  event_index integer, event_type text, asset_event_type text, asset_identifier text, contract_id text, topic text,
  sender text, recipient text, amount numeric, value_hex text, locked_address text, unlock_height bigint, api jsonb,
  decode boolean
) RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_build_object(
    'position', jsonb_build_object('index', event_index),
    'type', CASE event_type
      WHEN 'smart_contract_log' THEN 'SmartContractEvent'
      WHEN 'stx_asset' THEN 'STX' || CASE asset_event_type WHEN 'mint' THEN 'Mint' WHEN 'burn' THEN 'Burn' ELSE 'Transfer' END || 'Event'
      WHEN 'stx_lock' THEN 'STXLockEvent'
      WHEN 'fungible_token_asset' THEN 'FT' || CASE asset_event_type WHEN 'mint' THEN 'Mint' WHEN 'burn' THEN 'Burn' ELSE 'Transfer' END || 'Event'
      WHEN 'non_fungible_token_asset' THEN 'NFT' || CASE asset_event_type WHEN 'mint' THEN 'Mint' WHEN 'burn' THEN 'Burn' ELSE 'Transfer' END || 'Event'
      ELSE event_type END,
    'data', CASE event_type
      WHEN 'smart_contract_log' THEN
        jsonb_build_object('contract_identifier', contract_id, 'topic', topic)
        || jsonb_strip_nulls(jsonb_build_object(
             'raw_value', COALESCE(to_jsonb(value_hex), api -> 'contract_log' -> 'value' -> 'hex'),
             'value', CASE WHEN decode AND jsonb_typeof(api -> 'contract_log' -> 'value' -> 'repr') = 'string'
                           THEN api -> 'contract_log' -> 'value' -> 'repr' END))
        -- a JSON null hex is kept (jsonb_strip_nulls above would drop it)
        || CASE WHEN value_hex IS NULL AND api -> 'contract_log' -> 'value' -> 'hex' = 'null'::jsonb
                THEN jsonb_build_object('raw_value', NULL) ELSE '{}'::jsonb END
      WHEN 'stx_asset' THEN
        jsonb_build_object('amount', amount::text)
        || jsonb_strip_nulls(jsonb_build_object('sender', sender, 'recipient', recipient))
        || CASE WHEN api -> 'asset' -> 'memo' IS NOT NULL THEN jsonb_build_object('memo', api -> 'asset' -> 'memo') ELSE '{}'::jsonb END
      WHEN 'stx_lock' THEN
        jsonb_build_object('locked_amount', amount::text, 'unlock_height', unlock_height::text, 'locked_address', locked_address)
      WHEN 'fungible_token_asset' THEN
        jsonb_build_object('asset_identifier', asset_identifier, 'amount', amount::text)
        || jsonb_strip_nulls(jsonb_build_object('sender', NULLIF(sender, ''), 'recipient', NULLIF(recipient, '')))
      WHEN 'non_fungible_token_asset' THEN
        jsonb_build_object('asset_identifier', asset_identifier)
        || jsonb_strip_nulls(jsonb_build_object(
             'sender', NULLIF(sender, ''), 'recipient', NULLIF(recipient, ''),
             'raw_value', COALESCE(to_jsonb(value_hex), api -> 'asset' -> 'value' -> 'hex'),
             'value', CASE WHEN decode AND jsonb_typeof(api -> 'asset' -> 'value' -> 'repr') = 'string'
                           THEN api -> 'asset' -> 'value' -> 'repr' END))
        || CASE WHEN value_hex IS NULL AND api -> 'asset' -> 'value' -> 'hex' = 'null'::jsonb
                THEN jsonb_build_object('raw_value', NULL) ELSE '{}'::jsonb END
      ELSE api END)
$$;

-- the `kind` of a tx
CREATE OR REPLACE FUNCTION hook_tx_kind(tx_type text, contract_call_contract_id text, smart_contract_contract_id text, api jsonb)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE tx_type
    WHEN 'contract_call' THEN jsonb_build_object('type', 'ContractCall', 'data',
      jsonb_build_object('contract_identifier', contract_call_contract_id,
        'args', COALESCE((SELECT jsonb_agg(COALESCE(a.v -> 'repr', 'null'::jsonb) ORDER BY a.i)
                          FROM jsonb_array_elements(CASE WHEN jsonb_typeof(api -> 'contract_call' -> 'function_args') = 'array'
                                                         THEN api -> 'contract_call' -> 'function_args' ELSE '[]'::jsonb END)
                               WITH ORDINALITY AS a(v, i)), '[]'::jsonb))
      || CASE WHEN api -> 'contract_call' -> 'function_name' IS NOT NULL
              THEN jsonb_build_object('method', api -> 'contract_call' -> 'function_name') ELSE '{}'::jsonb END)
    WHEN 'smart_contract' THEN jsonb_build_object('type', 'ContractDeployment', 'data', jsonb_build_object('contract_identifier', smart_contract_contract_id))
    WHEN 'token_transfer' THEN jsonb_build_object('type', 'NativeTokenTransfer')
    WHEN 'coinbase' THEN jsonb_build_object('type', 'Coinbase')
    WHEN 'tenure_change' THEN jsonb_build_object('type', 'TenureChange')
    WHEN 'poison_microblock' THEN jsonb_build_object('type', 'Unsupported')
    ELSE jsonb_build_object('type', tx_type) END
$$;

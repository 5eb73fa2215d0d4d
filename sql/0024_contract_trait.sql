-- /extended/v1/contract/by_trait: deployed contracts whose ABI functions contain a trait's functions (jsonb
-- containment), found through a GIN index over the canonical deploys' ABI function lists instead of a scan.
CREATE INDEX IF NOT EXISTS txs_contract_abi_functions ON txs USING gin (((contract_abi::jsonb) -> 'functions') jsonb_path_ops)
  WHERE contract_abi IS NOT NULL AND smart_contract_contract_id IS NOT NULL AND canonical AND microblock_canonical;
-- /extended/v2/smart-contracts/status: pending deploys by contract id
CREATE INDEX IF NOT EXISTS mempool_smart_contract ON mempool_txs (smart_contract_contract_id) WHERE NOT pruned AND smart_contract_contract_id IS NOT NULL;

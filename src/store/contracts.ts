/** Contract reads: the deployment of a contract id (the one with an ABI first, canonical first). */
import type { Sql } from './sql.js';

export interface ContractRow {
  tx_id: string;
  canonical: boolean;
  block_height: number;
  contract_abi: unknown;
  api: { smart_contract?: { clarity_version?: number | null; source_code?: string } };
}

export async function contractDeployment(sql: Sql, contractId: string): Promise<ContractRow | undefined> {
  const [row] = await sql<ContractRow[]>`
    SELECT tx_id, canonical, block_height, contract_abi, api FROM txs
    WHERE smart_contract_contract_id = ${contractId}
    ORDER BY (contract_abi IS NOT NULL AND contract_abi::text <> 'null') DESC, canonical DESC, microblock_canonical DESC,
      block_height DESC
    LIMIT 1`;
  return row;
}

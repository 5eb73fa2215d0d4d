-- BNS genesis (Stacks 1.0) import (`stacks-pulse import-bns --dir D`, src/store/bns-import.ts): which parts are in,
-- so a second run changes nothing. The imported rows themselves live in bns_namespaces / bns_names / bns_zonefiles /
-- bns_subdomains, placed in the genesis block (height 1) and its first tx, as the reference places them.
CREATE TABLE IF NOT EXISTS bns_imports (
  part        text        PRIMARY KEY, -- 'names' (chainstate.txt + name_zonefiles.txt) or 'subdomains'
  rows        bigint      NOT NULL,
  imported_at timestamptz NOT NULL DEFAULT now()
);

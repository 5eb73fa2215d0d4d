-- BNS: names and namespaces of the BNS boot contract (v1, as the reference v8.13.6 derives them) and of the community
-- BNS-V2 contract, derived from canonical blocks through the derived-table hook (derived.sql); a row present is a
-- canonical row, no flags. Tables and backfills: sql/0050_bns.sql, sql/0052_bns_v2.sql.
--
-- First a small Clarity value decoder (only the BNS print values are decoded here). Its recursive calls are assignments
-- (`r := bns_cv_at(…)`, evaluated as plain expressions): as `SELECT * INTO r FROM bns_cv_at(…)` each ran as a query,
-- a third of the decoding time (7,614 BNS print values of the 10,000-block generated chain: 710 → 480 ms).
-- Values as jsonb: buffer → "0x…", string → string, (u)int → number, principal → its c32 address, bool, none → null,
-- some/ok/err → {"some"|"ok"|"err": v}, list → array, tuple → object.

-- A standard principal's c32check address from its version byte and hash160.
CREATE OR REPLACE FUNCTION bns_c32_address(version integer, hash160 bytea) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  alphabet constant text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  data bytea := hash160 || substring(sha256(sha256(set_byte('\x00'::bytea, 0, version) || hash160)) FROM 1 FOR 4);
  bits varbit := ('x' || encode(data, 'hex'))::varbit;
  digits text := '';
  zeros integer := 0;
BEGIN
  bits := repeat('0', (5 - length(bits) % 5) % 5)::varbit || bits;
  FOR i IN 0 .. length(bits) / 5 - 1 LOOP
    digits := digits || substr(alphabet, substring(bits FROM i * 5 + 1 FOR 5)::bit(5)::integer + 1, 1);
  END LOOP;
  WHILE zeros < length(data) AND get_byte(data, zeros) = 0 LOOP
    zeros := zeros + 1;
  END LOOP;
  RETURN 'S' || substr(alphabet, version + 1, 1) || repeat('0', zeros) || ltrim(digits, '0');
END
$$;

-- The big-endian 4-byte length at a position of a serialized value.
CREATE OR REPLACE FUNCTION bns_u32(data bytea, pos integer) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT (get_byte(data, pos)::bigint << 24) | (get_byte(data, pos + 1) << 16) | (get_byte(data, pos + 2) << 8)
    | get_byte(data, pos + 3)
$$;

-- The value that starts at `pos` of a serialized Clarity value, and the position after it.
CREATE OR REPLACE FUNCTION bns_cv_at(data bytea, pos integer, OUT val jsonb, OUT next integer)
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  t integer := get_byte(data, pos);
  n bigint;
  num numeric;
  p integer;
  kl integer;
  k text;
  r record;
  acc jsonb;
  addr text;
BEGIN
  pos := pos + 1;
  IF t = 0 OR t = 1 THEN
    num := 0;
    FOR i IN 0 .. 15 LOOP
      num := num * 256 + get_byte(data, pos + i);
    END LOOP;
    IF t = 0 AND get_byte(data, pos) >= 128 THEN num := num - power(2::numeric, 128); END IF;
    val := to_jsonb(num);
    next := pos + 16;
  ELSIF t = 2 THEN
    n := bns_u32(data, pos);
    val := to_jsonb('0x' || encode(substring(data FROM pos + 5 FOR n::integer), 'hex'));
    next := pos + 4 + n;
  ELSIF t = 3 OR t = 4 THEN
    val := to_jsonb(t = 3);
    next := pos;
  ELSIF t = 5 OR t = 6 THEN
    addr := bns_c32_address(get_byte(data, pos), substring(data FROM pos + 2 FOR 20));
    next := pos + 21;
    IF t = 6 THEN
      kl := get_byte(data, next);
      addr := addr || '.' || convert_from(substring(data FROM next + 2 FOR kl), 'UTF8');
      next := next + 1 + kl;
    END IF;
    val := to_jsonb(addr);
  ELSIF t IN (7, 8, 10) THEN
    r := bns_cv_at(data, pos);
    val := jsonb_build_object(CASE t WHEN 7 THEN 'ok' WHEN 8 THEN 'err' ELSE 'some' END, r.val);
    next := r.next;
  ELSIF t = 9 THEN
    val := 'null'::jsonb;
    next := pos;
  ELSIF t = 11 THEN
    n := bns_u32(data, pos);
    p := pos + 4;
    acc := '[]'::jsonb;
    FOR i IN 1 .. n LOOP
      r := bns_cv_at(data, p);
      acc := acc || jsonb_build_array(r.val);
      p := r.next;
    END LOOP;
    val := acc;
    next := p;
  ELSIF t = 12 THEN
    n := bns_u32(data, pos);
    p := pos + 4;
    acc := '{}'::jsonb;
    FOR i IN 1 .. n LOOP
      kl := get_byte(data, p);
      k := convert_from(substring(data FROM p + 2 FOR kl), 'UTF8');
      r := bns_cv_at(data, p + 1 + kl);
      acc := acc || jsonb_build_object(k, r.val);
      p := r.next;
    END LOOP;
    val := acc;
    next := p;
  ELSIF t = 13 OR t = 14 THEN
    n := bns_u32(data, pos);
    val := to_jsonb(convert_from(substring(data FROM pos + 5 FOR n::integer), 'UTF8'));
    next := pos + 4 + n;
  ELSE
    RAISE EXCEPTION 'unknown Clarity type %', t;
  END IF;
END
$$;

-- A hex Clarity value as jsonb; NULL when it does not decode.
CREATE OR REPLACE FUNCTION bns_cv(hex text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  r record;
BEGIN
  IF hex IS NULL THEN RETURN NULL; END IF;
  r := bns_cv_at(decode(CASE WHEN hex LIKE '0x%' THEN substr(hex, 3) ELSE hex END, 'hex'), 0);
  RETURN r.val;
EXCEPTION WHEN others THEN
  RETURN NULL;
END
$$;

-- A "0x…" buffer as UTF-8 text; NULL when it is not a buffer or not UTF-8.
CREATE OR REPLACE FUNCTION bns_utf8(buff text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF buff IS NULL OR buff NOT LIKE '0x%' THEN RETURN NULL; END IF;
  RETURN convert_from(decode(substr(buff, 3), 'hex'), 'UTF8');
EXCEPTION WHEN others THEN
  RETURN NULL;
END
$$;

-- Hex bytes ("0x…" or bare) as UTF-8 text; '' when they are not UTF-8.
CREATE OR REPLACE FUNCTION bns_hex_text(hex text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  RETURN convert_from(decode(regexp_replace(COALESCE(hex, ''), '^0x', ''), 'hex'), 'UTF8');
EXCEPTION WHEN others THEN
  RETURN '';
END
$$;

-- The bns::names NFT value of a name: (tuple (name buff) (namespace buff)) as lower-case "0x…" hex.
CREATE OR REPLACE FUNCTION bns_name_cv(name text, namespace text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT '0x0c00000002' || '046e616d65' || '02' || lpad(to_hex(octet_length(convert_to(name, 'UTF8'))), 8, '0')
    || encode(convert_to(name, 'UTF8'), 'hex') || '096e616d657370616365' || '02'
    || lpad(to_hex(octet_length(convert_to(namespace, 'UTF8'))), 8, '0') || encode(convert_to(namespace, 'UTF8'), 'hex')
$$;

-- Writes one name operation, computed against the rows present (all earlier in chain order).
CREATE OR REPLACE FUNCTION bns_add_name(
  p_name text, p_namespace text, p_address text, p_registered_at bigint, p_zonefile_hash text, p_status text,
  p_tx_id text, p_tx_index integer, p_event_index integer, p_microblock_sequence integer, p_block text
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_lifetime bigint;
  v_expire bigint := 0;
  v_hash text := p_zonefile_hash;
  prev record;
BEGIN
  SELECT lifetime INTO v_lifetime FROM bns_namespaces WHERE namespace_id = p_namespace
    ORDER BY ready_block DESC, microblock_sequence DESC, tx_index DESC LIMIT 1;
  IF FOUND THEN v_expire := p_registered_at + v_lifetime; END IF;
  SELECT expire_block, zonefile_hash INTO prev FROM bns_names WHERE name = p_name
    ORDER BY registered_at DESC, microblock_sequence DESC, tx_index DESC LIMIT 1;
  IF FOUND THEN
    IF p_status = 'name-transfer' THEN v_expire := prev.expire_block; END IF;
    IF v_hash = '' THEN v_hash := prev.zonefile_hash; END IF;
  END IF;
  INSERT INTO bns_names (name, namespace_id, address, registered_at, expire_block, zonefile_hash, status, tx_id,
    tx_index, event_index, microblock_sequence, index_block_hash)
  VALUES (p_name, p_namespace, p_address, p_registered_at, v_expire, v_hash, p_status, p_tx_id, p_tx_index,
    p_event_index, p_microblock_sequence, p_block);
END
$$;

-- Derived hook: +1 decodes the BNS boot contract's print events (and the name-renewal contract calls that print
-- nothing) of blocks that become canonical, in chain order, computing each row against the rows already present
-- (expiry from the namespace's lifetime, a transfer keeps the previous expiry, an empty zonefile hash keeps the
-- previous one); -1 deletes those blocks' rows. Rows of unconfirmed microblocks are never passed to the hook, so
-- `unanchored` adds nothing to BNS answers.
CREATE OR REPLACE FUNCTION bns_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  r record;
  v jsonb;
  md jsonb;
  props jsonb;
  pf jsonb;
  v_name text;
  v_namespace text;
  v_owner text;
  v_hash text;
BEGIN
  IF sign < 0 THEN
    DELETE FROM bns_names WHERE index_block_hash = ANY(blocks);
    DELETE FROM bns_namespaces WHERE index_block_hash = ANY(blocks);
    RETURN;
  END IF;
  FOR r IN
    SELECT * FROM (
      SELECT e.tx_id, e.index_block_hash, e.block_height, e.tx_index, e.event_index, t.microblock_sequence,
        e.contract_id, e.value_hex, NULL::json AS args, t.sender_address
      FROM events e
      JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash
      WHERE e.index_block_hash = ANY(blocks) AND e.index_block_hash <> '' AND e.microblock_canonical
        AND e.event_type = 'smart_contract_log' AND e.topic = 'print'
        AND e.contract_id IN ('SP000000000000000000002Q6VF78.bns', 'ST000000000000000000002AMW42H.bns')
        AND t.status = 'success'
      UNION ALL
      -- a name-renewal without a zonefile hash prints nothing: the row comes from the call's arguments
      SELECT t.tx_id, t.index_block_hash, t.block_height, t.tx_index, NULL, t.microblock_sequence,
        t.contract_call_contract_id, NULL, t.api->'contract_call'->'function_args', t.sender_address
      FROM txs t
      WHERE t.index_block_hash = ANY(blocks) AND t.index_block_hash <> '' AND t.microblock_canonical
        AND t.contract_call_contract_id IN ('SP000000000000000000002Q6VF78.bns', 'ST000000000000000000002AMW42H.bns')
        AND t.status = 'success' AND t.api->'contract_call'->>'function_name' = 'name-renewal'
        AND json_array_length(t.api->'contract_call'->'function_args') = 5
        AND t.api->'contract_call'->'function_args'->4->>'hex' = '0x09'
    ) x
    ORDER BY block_height, microblock_sequence, tx_index, event_index NULLS FIRST
  LOOP
    IF r.args IS NOT NULL THEN
      v_namespace := bns_utf8(bns_cv(r.args->0->>'hex') #>> '{}');
      v_name := bns_utf8(bns_cv(r.args->1->>'hex') #>> '{}');
      IF v_name IS NULL OR v_namespace IS NULL THEN CONTINUE; END IF;
      PERFORM bns_add_name(v_name || '.' || v_namespace, v_namespace, r.sender_address, r.block_height, '',
        'name-renewal', r.tx_id, r.tx_index, NULL, r.microblock_sequence, r.index_block_hash);
      CONTINUE;
    END IF;
    v := bns_cv(r.value_hex);
    IF v IS NULL OR jsonb_typeof(v) <> 'object' THEN CONTINUE; END IF;
    IF v ? 'attachment' THEN
      md := v->'attachment'->'metadata';
      v_name := bns_utf8(md->>'name');
      v_namespace := bns_utf8(md->>'namespace');
      v_owner := md->>'tx-sender';
      v_hash := v->'attachment'->>'hash';
      IF v_name IS NULL OR v_namespace IS NULL OR v_owner IS NULL OR v_hash IS NULL OR md->>'op' IS NULL THEN
        CONTINUE;
      END IF;
      IF md->>'op' = 'name-transfer' THEN
        -- the new owner: the bns::names NFT transfer of this name in the same tx
        SELECT COALESCE((
          SELECT e.recipient FROM events e
          WHERE e.tx_id = r.tx_id AND e.index_block_hash = r.index_block_hash AND e.microblock_canonical
            AND e.asset_identifier = r.contract_id || '::names' AND e.asset_event_type = 'transfer'
            AND lower(e.value_hex) = bns_name_cv(v_name, v_namespace)
          ORDER BY e.event_index LIMIT 1), v_owner) INTO v_owner;
      END IF;
      PERFORM bns_add_name(v_name || '.' || v_namespace, v_namespace, v_owner, r.block_height,
        CASE WHEN v_hash LIKE '0x%' THEN substr(v_hash, 3) ELSE v_hash END, md->>'op', r.tx_id, r.tx_index,
        r.event_index, r.microblock_sequence, r.index_block_hash);
    ELSIF v->>'status' = 'ready' AND v ? 'properties' AND v ? 'namespace' THEN
      props := v->'properties';
      pf := props->'price-function';
      v_namespace := bns_utf8(v->>'namespace');
      IF v_namespace IS NULL OR pf IS NULL THEN CONTINUE; END IF;
      INSERT INTO bns_namespaces (namespace_id, address, launched_at, reveal_block, ready_block, buckets, base, coeff,
        nonalpha_discount, no_vowel_discount, lifetime, status, tx_id, tx_index, event_index, microblock_sequence,
        index_block_hash)
      VALUES (v_namespace, props->>'namespace-import',
        COALESCE((props->'launched-at'->>'some')::bigint, 0), (props->>'revealed-at')::bigint, r.block_height,
        (SELECT COALESCE(string_agg(b #>> '{}', ',' ORDER BY i), '') FROM jsonb_array_elements(pf->'buckets')
          WITH ORDINALITY AS x(b, i)),
        (pf->>'base')::numeric, (pf->>'coeff')::numeric, (pf->>'nonalpha-discount')::numeric,
        (pf->>'no-vowel-discount')::numeric, (props->>'lifetime')::bigint, 'ready', r.tx_id, r.tx_index,
        r.event_index, r.microblock_sequence, r.index_block_hash);
    END IF;
  END LOOP;
END
$$;

-- Derived hook for BNS-V2 (beyond the reference, which never indexed it): the community contract's name operations,
-- from its print events ({topic: "new-name" | "transfer-name" | "renew-name" | "burn-name" | "new-airdrop", owner,
-- name: {name, namespace}, id, properties | registered-at}). The owner shown is the latest canonical NFT event of the
-- name's id (so marketplace sales and plain SIP-09 transfers count), else the print's.
CREATE OR REPLACE FUNCTION bns_v2_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF sign < 0 THEN
    DELETE FROM bns_v2_names WHERE index_block_hash = ANY(blocks);
    RETURN;
  END IF;
  INSERT INTO bns_v2_names (name, namespace_id, contract_id, nft_id, op, owner, registered_at, renewal_height,
    block_height, tx_id, tx_index, event_index, index_block_hash)
  SELECT bns_utf8(v->'name'->>'name') || '.' || bns_utf8(v->'name'->>'namespace'), bns_utf8(v->'name'->>'namespace'),
    contract_id, (v->>'id')::numeric, v->>'topic', NULLIF(v->>'owner', ''),
    COALESCE((v->'properties'->'some'->'registered-at'->>'some')::bigint, (v->>'registered-at')::bigint),
    (v->'properties'->'some'->>'renewal-height')::bigint,
    block_height, tx_id, tx_index, event_index, index_block_hash
  FROM (
    SELECT bns_cv(e.value_hex) AS v, e.contract_id, e.block_height, e.tx_id, e.tx_index, e.event_index, e.index_block_hash
    FROM events e
    JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash
    WHERE e.index_block_hash = ANY(blocks) AND e.index_block_hash <> '' AND e.microblock_canonical
      AND e.event_type = 'smart_contract_log' AND e.topic = 'print'
      AND e.contract_id IN (SELECT contract_id FROM bns_v2_contracts)
      AND t.status = 'success'
  ) p
  WHERE jsonb_typeof(v) = 'object'
    AND v->>'topic' IN ('new-name', 'transfer-name', 'renew-name', 'burn-name', 'new-airdrop')
    AND bns_utf8(v->'name'->>'name') IS NOT NULL AND bns_utf8(v->'name'->>'namespace') IS NOT NULL
    AND jsonb_typeof(v->'id') = 'number';
END
$$;

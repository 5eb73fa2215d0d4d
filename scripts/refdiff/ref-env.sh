# Sourced by run-stream.sh and import.sh: the reference's configuration (environment variables win over the .env file
# in its app folder, which dotenv still loads for everything not set here).
# Usage: ref_env <pg host> <pg port> <pg user> <database> <chain id> <API port>
ref_env() {
  local host=$1 port=$2 user=$3 db=$4 chain_id=$5 api_port=$6
  export NODE_ENV=production # = unset: how `npm start` runs it; needs $APP/.git-info
  export PG_HOST=$host PG_PORT=$port PG_USER=$user PG_PASSWORD=postgres
  export PG_DATABASE=$db PG_SCHEMA=public PG_SSL=false
  export PG_PRIMARY_HOST=$host PG_PRIMARY_PORT=$port PG_PRIMARY_USER=$user
  export PG_PRIMARY_PASSWORD=postgres PG_PRIMARY_DATABASE=$db PG_PRIMARY_SCHEMA=public
  export PG_APPLICATION_NAME=refsrv-stacks-blockchain-api
  export STACKS_CHAIN_ID=$chain_id
  export STACKS_CORE_EVENT_HOST=127.0.0.1 STACKS_CORE_EVENT_PORT=4700
  export STACKS_BLOCKCHAIN_API_HOST=127.0.0.1 STACKS_BLOCKCHAIN_API_PORT=$api_port
  export STACKS_CORE_RPC_HOST=127.0.0.1 STACKS_CORE_RPC_PORT=20443 # nothing listens there
  export STACKS_CORE_PROXY_HOST=127.0.0.1 STACKS_CORE_PROXY_PORT=20443
  export SKIP_STACKS_CHAIN_ID_CHECK=1
  export STACKS_SHUTDOWN_FORCE_KILL_TIMEOUT=10
  unset BNS_IMPORT_DIR STACKS_API_ENABLE_LEGACY_ENDPOINTS STACKS_API_ENABLE_FT_METADATA \
    IBD_MODE_UNTIL_BLOCK SNP_EVENT_STREAMING REDIS_NOTIFIER_ENABLED STACKS_PROFILER_PORT \
    STACKS_READ_ONLY_MODE STACKS_API_OFFLINE_MODE PG_CONNECTION_URI PG_PRIMARY_CONNECTION_URI
}

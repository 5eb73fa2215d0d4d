// The primary + streaming standby pair of the read-replica tests lives with the load script that uses it too.
export { startReplicatedPostgres, type PgServer, type ReplicatedPostgres } from '../../load/replica-cluster.js';

/**
 * The configuration files of the high-availability deployment that
 * docs/high-availability.md shows: one etcd, three Patroni members with
 * synchronous replication, and HAProxy in front of the leader. The harness
 * (cluster.ts) writes exactly these, and a docs test compares them with the
 * document, so the two cannot drift apart.
 */

export interface MemberPorts {
  name: string;
  /** Postgres. */
  pgPort: number;
  /** Patroni's REST API, which HAProxy asks who is the primary. */
  restPort: number;
}

export interface ClusterLayout {
  /** Where the members' data directories and sockets live. */
  root: string;
  etcdClientPort: number;
  etcdPeerPort: number;
  proxyPort: number;
  members: readonly MemberPorts[];
}

export const POSTGRES_BIN_DIR = '/usr/lib/postgresql/15/bin';

/** The ports the test uses: well away from 5432 (the CI's Postgres) and from other suites' clusters. */
export const TEST_LAYOUT_PORTS = {
  etcdClientPort: 23790,
  etcdPeerPort: 23800,
  proxyPort: 5440,
  members: [
    { name: 'pg1', pgPort: 5441, restPort: 8441 },
    { name: 'pg2', pgPort: 5442, restPort: 8442 },
    { name: 'pg3', pgPort: 5443, restPort: 8443 },
  ],
} as const;

/** etcd's command line: one member, enough for a test or a demonstration (production runs three). */
export function etcdArguments(layout: Pick<ClusterLayout, 'root' | 'etcdClientPort' | 'etcdPeerPort'>): string[] {
  const client = `http://127.0.0.1:${layout.etcdClientPort}`;
  const peer = `http://127.0.0.1:${layout.etcdPeerPort}`;
  return [
    '--name=etcd1',
    `--data-dir=${layout.root}/etcd`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=etcd1=${peer}`,
    '--initial-cluster-state=new',
  ];
}

/**
 * One member's patroni.yml. The `bootstrap.dcs` part is written to etcd by
 * the first member to start and is the cluster's from then on (change it
 * with `patronictl edit-config`); the rest is this member's own.
 */
export function patroniConfig(layout: ClusterLayout, member: MemberPorts): string {
  return `scope: topup
namespace: /service/
name: ${member.name}

restapi:
  listen: 127.0.0.1:${member.restPort}
  connect_address: 127.0.0.1:${member.restPort}

etcd3:
  hosts: 127.0.0.1:${layout.etcdClientPort}

bootstrap:
  dcs:
    # A lost leader lock is noticed within ttl seconds; loop_wait + 2 * retry_timeout <= ttl.
    ttl: 20
    loop_wait: 1
    retry_timeout: 5
    # A standby further behind than this (bytes) is never promoted.
    maximum_lag_on_failover: 1048576
    # A primary whose Postgres crashed is not restarted in place: its synchronous standby takes over at once.
    primary_start_timeout: 0
    # Every commit waits for one standby, and only that standby may be promoted.
    synchronous_mode: true
    synchronous_mode_strict: false
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        wal_level: replica
        hot_standby: 'on'
        max_wal_senders: 10
        max_replication_slots: 10
        wal_log_hints: 'on'
        max_connections: 200
  initdb:
    - encoding: UTF8
    - data-checksums

postgresql:
  listen: 127.0.0.1:${member.pgPort}
  connect_address: 127.0.0.1:${member.pgPort}
  data_dir: ${layout.root}/${member.name}
  bin_dir: ${POSTGRES_BIN_DIR}
  pgpass: ${layout.root}/${member.name}.pgpass
  authentication:
    superuser:
      username: postgres
    replication:
      username: postgres
  parameters:
    unix_socket_directories: ${layout.root}
  pg_hba:
    - local all all trust
    - host all postgres 127.0.0.1/32 trust
    - host replication postgres 127.0.0.1/32 trust

tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
  nosync: false
`;
}

/**
 * HAProxy: one address for the service, forwarded to whichever member
 * Patroni's REST API calls the primary (200 on OPTIONS /primary; 503 on
 * the others). A member marked down has its sessions cut at once, so the
 * service's connections to a demoted primary fail instead of hanging.
 * Each server takes at most 180 connections, below Postgres's
 * max_connections (200), which keeps room for Patroni's own connections
 * and the ones Postgres reserves for superusers.
 */
export function haproxyConfig(layout: ClusterLayout): string {
  const servers = layout.members.map((m) => `  server ${m.name} 127.0.0.1:${m.pgPort} maxconn 180 check port ${m.restPort}`).join('\n');
  return `global
  maxconn 1000

defaults
  mode tcp
  retries 2
  timeout connect 2s
  timeout client 30m
  timeout server 30m
  timeout check 2s

listen primary
  bind 127.0.0.1:${layout.proxyPort}
  option httpchk OPTIONS /primary
  http-check expect status 200
  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
${servers}
`;
}

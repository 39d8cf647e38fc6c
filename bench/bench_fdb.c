/* bench_fdb: FDB lookup rate and the cost of one forwarding decision
 * (learn source + look up destination), for several table sizes.
 *
 *   bench_fdb [-n lookups]     default 4,000,000 per measurement
 *
 * Prints, per table size, lookups per second (hits in pseudo-random order,
 * so larger tables also show cache misses), misses per second, learning
 * of new MACs per second, and fwd_frame decisions per second for known
 * unicast between two learned MACs; then the socket demux's VNI -> port
 * lookup for a socket of 64 VNIs, vni_map against the linear scan it
 * replaces.  Rates are per second of this
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so a loaded, shared machine
 * does not make them look slower than they are; cache effects remain. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "switch/fdb.h"
#include "switch/forward.h"
#include "switch/vni.h"
#include "switch/vni_map.h"

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void mac_from_index(uint32_t i, uint8_t mac[6])
{
	mac[0] = 0x06;
	mac[1] = 0x01;
	mac[2] = (uint8_t)(i >> 24);
	mac[3] = (uint8_t)(i >> 16);
	mac[4] = (uint8_t)(i >> 8);
	mac[5] = (uint8_t)i;
}

/* xorshift: a cheap, repeatable pseudo-random order of entries. */
static uint32_t next_rand(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static double rate(uint64_t n, uint64_t ns)
{
	return ns ? (double)n * 1e9 / (double)ns : 0;
}

static void bench_size(uint32_t n_entries, uint64_t n_ops)
{
	struct fdb_config config = { .max_learned = n_entries, .hash_seed = 0x9e3779b97f4a7c15ull };
	struct fdb *fdb;
	int err = fdb_create(&config, &fdb);
	if (err < 0) {
		fprintf(stderr, "fdb_create(%u): %s\n", n_entries, strerror(-err));
		exit(1);
	}
	struct fdb_dst port = fdb_dst_port(1), dst;
	uint8_t mac[6];
	volatile uint64_t sink = 0;

	uint64_t t0 = cpu_ns();
	for (uint32_t i = 0; i < n_entries; i++) {
		mac_from_index(i, mac);
		fdb_learn(fdb, 10, mac, &port, 0);
	}
	uint64_t learn_ns = cpu_ns() - t0;

	uint32_t seed = 12345;
	t0 = cpu_ns();
	for (uint64_t i = 0; i < n_ops; i++) {
		mac_from_index(next_rand(&seed) % n_entries, mac);
		sink += fdb_lookup(fdb, 10, mac, 1, &dst);
	}
	uint64_t hit_ns = cpu_ns() - t0;

	t0 = cpu_ns();
	for (uint64_t i = 0; i < n_ops; i++) {
		mac_from_index(next_rand(&seed) % n_entries, mac);
		sink += fdb_lookup(fdb, 11, mac, 1, &dst); /* other VNI: all miss */
	}
	uint64_t miss_ns = cpu_ns() - t0;
	if (sink != n_ops) {
		fprintf(stderr, "unexpected hit count %llu\n", (unsigned long long)sink);
		exit(1);
	}

	/* fwd_frame between two learned MACs on two ports (known unicast),
	 * with the table filled to n_entries around them. */
	struct vni_table *vnis;
	if (vni_table_create(&vnis) < 0)
		exit(1);
	vni_add(vnis, 10);
	vni_add_port(vnis, 10, 1);
	vni_add_port(vnis, 10, 2);
	struct fdb_flush_filter all = { .vni = FDB_VNI_ANY };
	fdb_flush(fdb, &all);
	for (uint32_t i = 2; i < n_entries; i++) {
		mac_from_index(i, mac);
		fdb_learn(fdb, 10, mac, &port, 0);
	}
	struct fwd_switch sw;
	static struct fwd_result res;
	fwd_init(&sw, fdb, vnis);
	uint8_t mac_a[6], mac_b[6];
	mac_from_index(0, mac_a);
	mac_from_index(1, mac_b);
	struct fdb_dst in_a = fdb_dst_port(1), in_b = fdb_dst_port(2);
	fwd_frame(&sw, &in_a, 10, mac_b, mac_a, 1, &res);
	fwd_frame(&sw, &in_b, 10, mac_a, mac_b, 1, &res);
	t0 = cpu_ns();
	for (uint64_t i = 0; i < n_ops; i += 2) {
		fwd_frame(&sw, &in_a, 10, mac_b, mac_a, 2 + i, &res);
		fwd_frame(&sw, &in_b, 10, mac_a, mac_b, 2 + i, &res);
	}
	uint64_t fwd_ns = cpu_ns() - t0;
	if (sw.stats.unicast < n_ops) {
		fprintf(stderr, "expected unicast decisions, got %llu\n",
			(unsigned long long)sw.stats.unicast);
		exit(1);
	}

	printf("entries %8u  learn %6.1f M/s  lookup-hit %6.1f M/s  lookup-miss %6.1f M/s  "
	       "fwd_frame(unicast) %6.1f M/s (%.1f ns)\n",
	       n_entries, rate(n_entries, learn_ns) / 1e6, rate(n_ops, hit_ns) / 1e6,
	       rate(n_ops, miss_ns) / 1e6, rate(n_ops, fwd_ns) / 1e6,
	       (double)fwd_ns / (double)n_ops);
	vni_table_destroy(vnis);
	fdb_destroy(fdb);
}

/* The socket demux: 64 VNIs on one socket, looked up in pseudo-random
 * order (3/4 hits), by vni_map and by the linear scan it replaces. */
static void bench_vni_map(uint64_t n_ops)
{
	enum { N = 64 };
	uint32_t vnis[N];
	uint16_t ports[N];
	for (unsigned i = 0; i < N; i++) {
		vnis[i] = 5000 + i * 7;
		ports[i] = (uint16_t)i;
	}
	struct vni_map *m;
	if (vni_map_build(vnis, ports, N, &m) < 0)
		exit(1);
	volatile int64_t sink_map = 0, sink_scan = 0;
	uint32_t seed = 777;
	uint64_t t0 = cpu_ns();
	for (uint64_t i = 0; i < n_ops; i++) {
		uint32_t r = next_rand(&seed);
		sink_map += vni_map_lookup(m, 5000 + (r % (N * 4 / 3)) * 7);
	}
	uint64_t map_ns = cpu_ns() - t0;
	seed = 777;
	t0 = cpu_ns();
	for (uint64_t i = 0; i < n_ops; i++) {
		uint32_t r = next_rand(&seed), vni = 5000 + (r % (N * 4 / 3)) * 7;
		int port = -1;
		for (unsigned j = 0; j < N; j++)
			if (vnis[j] == vni) {
				port = ports[j];
				break;
			}
		sink_scan += port;
	}
	uint64_t scan_ns = cpu_ns() - t0;
	if (sink_map != sink_scan) {
		fprintf(stderr, "vni_map and the scan disagree\n");
		exit(1);
	}
	printf("vni_map %u vnis  lookup %6.1f M/s (%.1f ns)  linear-scan %6.1f M/s (%.1f ns)\n", N,
	       rate(n_ops, map_ns) / 1e6, (double)map_ns / (double)n_ops, rate(n_ops, scan_ns) / 1e6,
	       (double)scan_ns / (double)n_ops);
	vni_map_destroy(m);
}

int main(int argc, char **argv)
{
	uint64_t n_ops = 4000000;
	if (argc == 3 && strcmp(argv[1], "-n") == 0)
		n_ops = strtoull(argv[2], NULL, 0);
	else if (argc != 1) {
		fprintf(stderr, "usage: %s [-n lookups]\n", argv[0]);
		return 2;
	}
	static const uint32_t sizes[] = { 1024, 8192, 65536, 1048576 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		bench_size(sizes[i], n_ops);
	bench_vni_map(n_ops);
	return 0;
}

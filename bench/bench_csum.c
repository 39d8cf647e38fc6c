/* bench_csum: throughput of csum_partial() against the plain loop (one
 * 16-bit word at a time), at frame sizes that matter (64 B, 1500 B, 9000 B,
 * 64 KB), then of its scalar and AVX2 loops apart, and of csum_pkt() over a 64 KB GRO-style chain (linear headers +
 * MSS-sized frags, and the same with odd-sized frags).
 *
 * Figures are GB/s (10^9 bytes per second) of checksummed data, the best of
 * several rounds so a busy shared machine disturbs them less.  Buffers start
 * one byte past an 8-byte boundary: payload is rarely aligned on the wire.
 *
 * Usage: bench_csum [rounds]   (default 5) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "csum_reference.h"
#include "packet/csum.h"
#include "packet/pkt.h"

/* The obvious implementation (one word at a time), for comparison; kept
 * out of line so it is timed as a call, like csum_partial(). */
__attribute__((noinline)) static uint32_t csum_plain(const void *buf, size_t len, uint32_t sum)
{
	return csum_ref_sum(buf, len, sum);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef uint32_t (*sum_fn)(const void *buf, size_t len, uint32_t sum);

/* Enough bytes per round for ~50 ms at 10 GB/s. */
enum { BYTES_PER_ROUND = 1 << 29 };

static volatile uint32_t sink;

static double gbps_buf(sum_fn fn, const uint8_t *buf, size_t len, int rounds, size_t bytes)
{
	double best = 0;
	size_t iters = bytes / len + 1;
	for (int r = 0; r < rounds; r++) {
		uint32_t acc = 0;
		double t0 = now_s();
		for (size_t i = 0; i < iters; i++)
			acc += fn(buf, len, acc);
		double t = now_s() - t0;
		sink = acc;
		double g = (double)(iters * len) / t / 1e9;
		if (g > best)
			best = g;
	}
	return best;
}

static double gbps_pkt(const struct pkt *pkt, int rounds, size_t bytes)
{
	double best = 0;
	uint32_t len = pkt_len(pkt);
	size_t iters = bytes / len + 1;
	for (int r = 0; r < rounds; r++) {
		uint32_t acc = 0;
		double t0 = now_s();
		for (size_t i = 0; i < iters; i++)
			acc += csum_pkt(pkt, 0, len, acc);
		double t = now_s() - t0;
		sink = acc;
		double g = (double)(iters * len) / t / 1e9;
		if (g > best)
			best = g;
	}
	return best;
}

/* A 64 KB frame as GRO leaves it: 66 header bytes linear, payload in frags
 * of `frag_size` bytes (the last one shorter). */
static struct pkt *make_chain(struct pkt_pool *pool, const uint8_t *bytes, uint32_t total, uint32_t frag_size)
{
	struct pkt *pkt = pkt_alloc(pool);
	if (!pkt || pkt_set_data(pkt, bytes, 66) != 0)
		return NULL;
	for (uint32_t at = 66; at < total;) {
		uint32_t n = total - at < frag_size ? total - at : frag_size;
		if (pkt_add_frag(pkt, bytes + at, n, NULL) != 0)
			return NULL;
		at += n;
	}
	return pkt;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	if (rounds < 1)
		rounds = 1;
	enum { MAX = 65536 };
	uint8_t *mem = malloc(MAX + 16);
	if (!mem)
		return 1;
	for (size_t i = 0; i < MAX + 16; i++)
		mem[i] = (uint8_t)(i * 2654435761u >> 13);
	const uint8_t *buf = mem + 1;

	/* Both implementations must agree before their speed means anything. */
	static const size_t sizes[] = { 64, 1500, 9000, 65536 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if (csum_fold(csum_partial(buf, sizes[i], 0)) != csum_fold(csum_plain(buf, sizes[i], 0))) {
			fprintf(stderr, "bench_csum: csum_partial disagrees with the plain loop at %zu bytes\n",
				sizes[i]);
			return 1;
		}
	}

	printf("%-28s %10s %10s %8s\n", "buffer", "plain GB/s", "csum GB/s", "speedup");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t len = sizes[i];
		/* The plain loop is slower: give it fewer bytes, same precision. */
		double plain = gbps_buf(csum_plain, buf, len, rounds, BYTES_PER_ROUND / 8);
		double fast = gbps_buf(csum_partial, buf, len, rounds, BYTES_PER_ROUND);
		printf("csum_partial %-15zu %10.2f %10.2f %7.1fx\n", len, plain, fast, fast / plain);
	}
	/* The two loops csum_partial() picks between, each on its own. */
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t len = sizes[i];
		double plain = gbps_buf(csum_plain, buf, len, rounds, BYTES_PER_ROUND / 8);
		double scalar = gbps_buf(csum_partial_scalar, buf, len, rounds, BYTES_PER_ROUND);
		printf("  scalar loop %-15zu %10.2f %10.2f %7.1fx\n", len, plain, scalar, scalar / plain);
		if (!csum_partial_avx2_supported())
			continue;
		double avx2 = gbps_buf(csum_partial_avx2, buf, len, rounds, BYTES_PER_ROUND);
		printf("  avx2 loop   %-15zu %10.2f %10.2f %7.1fx\n", len, plain, avx2, avx2 / plain);
	}

	struct pkt_pool *pool;
	if (pkt_pool_create(2, &pool) < 0)
		return 1;
	static const struct {
		const char *name;
		uint32_t frag_size;
	} chains[] = {
		{ "csum_pkt 64KB, 1448 B frags", 1448 },
		{ "csum_pkt 64KB, 1111 B frags", 1111 }, /* odd: every other frag starts odd */
	};
	for (size_t i = 0; i < sizeof(chains) / sizeof(chains[0]); i++) {
		struct pkt *pkt = make_chain(pool, buf, 65000, chains[i].frag_size);
		if (!pkt) {
			fprintf(stderr, "bench_csum: cannot build the %s chain\n", chains[i].name);
			return 1;
		}
		if (csum_fold(csum_pkt(pkt, 0, pkt_len(pkt), 0)) != csum_fold(csum_plain(buf, 65000, 0))) {
			fprintf(stderr, "bench_csum: csum_pkt disagrees with the flat sum\n");
			return 1;
		}
		double g = gbps_pkt(pkt, rounds, BYTES_PER_ROUND);
		printf("%-28s %10s %10.2f %8s  (%u frags)\n", chains[i].name, "-", g, "-", pkt->nr_frags);
		pkt_free(pkt);
	}
	pkt_pool_destroy(pool);
	free(mem);
	return 0;
}

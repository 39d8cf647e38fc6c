/* bench_parse: how fast does flow_extract() parse a trace?
 *
 *   bench_parse [-t SECONDS] [-n FRAMES] [FILE.pcap ...]
 *
 * Default traces (paths from the repository root, where `make bench` runs):
 * bench/data/vxlan_tcp4.pcap (4096 VXLAN-encapsulated TCP segments, the
 * shape of the overlay's receive path), bench/data/tcp4.pcap (the same flows
 * unencapsulated, the tap side) and tests/data/golden_vxlan.pcap (every
 * protocol kind inside VXLAN, a small cache-hot mix).
 *
 * Each trace is copied once into pkts of one pool, as a port would hand them
 * over (each frame in its own PKT_BUF_SIZE buffer at PKT_HEADROOM), then
 * flow_extract() runs over the whole trace again and again for SECONDS
 * (default 1) on one core, in 5 rounds.  Time is the thread's CPU time, so
 * being descheduled on a busy machine does not count (sharing caches does).  Prints packets per second and
 * nanoseconds per packet of the best round (the parser's speed when the core
 * is not shared) and of the median round, and the number of frames the parser dropped (0 expected on the
 * traces; dropped frames still count as parsed work).
 *
 * Over a whole 4096-frame trace every frame's headers are a cache (and TLB)
 * miss: 4096 buffers of 64 KB.  -n 32 keeps only the first 32 frames, a
 * receive batch whose headers are hot, as they are right after the port
 * copied the batch in; the two figures bracket the datapath's cost.
 *
 * A figure, not a test: nothing here asserts a speed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "packet/drop_reason.h"
#include "packet/hdr.h"
#include "packet/pkt.h"
#include "parse/flow.h"
#include "parse/flow_extract.h"
#include "pcap_load.h"

static const char *const default_traces[] = {
	"bench/data/vxlan_tcp4.pcap",
	"bench/data/tcp4.pcap",
	"tests/data/golden_vxlan.pcap",
};

static double clock_seconds(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Keeps the compiler from deciding the keys are unused. */
static volatile uint32_t sink;

enum { BENCH_ROUNDS = 5 };

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* One pass; returns the number of frames dropped. */
static uint32_t parse_pass(struct pcap_trace *t)
{
	struct flow_key key;
	uint32_t drops = 0, mix = 0;

	for (uint32_t i = 0; i < t->count; i++) {
		if (flow_extract(t->pkts[i], VXLAN_DEFAULT_PORT, &key) != DROP_NONE)
			drops++;
		mix += key.tp_src ^ key.tun_vni;
	}
	sink += mix;
	return drops;
}

static int bench_trace(const char *path, double seconds, uint32_t max_frames)
{
	struct pcap_trace trace, *t = &trace;

	/* The daemon's 64 KB buffers, one per frame. */
	if (pcap_trace_load(t, "bench_parse", path, max_frames, false) < 0)
		return -1;

	/* Warm up (first touch of every buffer, branch predictors), and learn
	 * how many passes make a timing slice of about 1 ms so clock reads stay
	 * out of the figure. */
	uint32_t drops = parse_pass(t);
	uint32_t passes_per_slice = 1 + 1000000 / (t->count * 50 + 1);

	/* Timed in BENCH_ROUNDS rounds: on a shared machine the best round is the
	 * parser's speed, the median shows how much the neighbours took. */
	double ns_per_pkt[BENCH_ROUNDS];
	uint64_t passes = 0;
	for (int round = 0; round < BENCH_ROUNDS; round++) {
		uint64_t round_passes = 0;
		double start = clock_seconds(CLOCK_MONOTONIC);
		double cpu_start = clock_seconds(CLOCK_THREAD_CPUTIME_ID), cpu;
		do {
			for (uint32_t i = 0; i < passes_per_slice; i++)
				parse_pass(t);
			round_passes += passes_per_slice;
		} while (clock_seconds(CLOCK_MONOTONIC) - start < seconds / BENCH_ROUNDS);
		cpu = clock_seconds(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
		ns_per_pkt[round] = cpu * 1e9 / ((double)round_passes * t->count);
		passes += round_passes;
	}
	qsort(ns_per_pkt, BENCH_ROUNDS, sizeof(ns_per_pkt[0]), compare_double);
	double best = ns_per_pkt[0], median = ns_per_pkt[BENCH_ROUNDS / 2];

	printf("%-30s %6u %7.0f %9lu %8.2f %8.1f %8.2f %8.1f %5u\n", path, t->count,
	       (double)t->bytes / t->count, (unsigned long)passes, 1e3 / best, best,
	       1e3 / median, median, drops);
	pcap_trace_release(t);
	return 0;
}

int main(int argc, char **argv)
{
	uint32_t max_frames = UINT32_MAX;
	double seconds = 1.0;
	int first = 1, status = 0;

	while (first + 1 < argc && argv[first][0] == '-') {
		if (strcmp(argv[first], "-t") == 0)
			seconds = atof(argv[first + 1]);
		else if (strcmp(argv[first], "-n") == 0)
			max_frames = (uint32_t)strtoul(argv[first + 1], NULL, 0);
		else
			break;
		first += 2;
	}
	if (seconds <= 0 || max_frames == 0 || (first < argc && argv[first][0] == '-')) {
		fprintf(stderr, "usage: %s [-t SECONDS] [-n FRAMES] [FILE.pcap ...]\n", argv[0]);
		return 1;
	}

	printf("flow_extract (vxlan port %d), %.1f s per trace, one core\n", VXLAN_DEFAULT_PORT, seconds);
	printf("%-30s %6s %7s %9s %8s %8s %8s %8s %5s\n", "trace", "frames", "avg_len", "passes",
	       "Mpps", "ns/pkt", "med_Mpps", "med_ns", "drops");
	if (first >= argc) {
		for (size_t i = 0; i < sizeof(default_traces) / sizeof(default_traces[0]); i++)
			if (bench_trace(default_traces[i], seconds, max_frames) < 0)
				status = 1;
	} else {
		for (int i = first; i < argc; i++)
			if (bench_trace(argv[i], seconds, max_frames) < 0)
				status = 1;
	}
	return status;
}

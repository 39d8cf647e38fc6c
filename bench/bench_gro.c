/* bench_gro: how fast does GRO merge a trace, and how big are its frames?
 *
 *   bench_gro [-t SECONDS] [-n FRAMES] [-m burst32|burst64|held]
 *             [-c verify|trusted] [-p small|big] [--check] [FILE.pcap ...]
 *
 * Default traces (from the repository root): bench/data/vxlan_tcp4.pcap and
 * bench/data/tcp4.pcap (copies of shared/traces, see its README: 64 TCP/IPv4
 * flows in trains of 1-16 segments, payload byte at stream offset o of flow
 * f is (o + f) & 0xff).
 *
 * Like the DPDK anchor (shared/anchors/dpdk-gro/bench_gro.c) the trace is
 * loaded once, one pkt per frame (-p small, the default: pkts from
 * pkt_pool_create_sized() just big enough for the largest frame, packed like
 * a NIC driver's receive buffers or DPDK's mbufs; -p big: the daemon's
 * 64 KB buffers), and parsed once (flow_extract, as the
 * port/pipeline does before GRO; DPDK's equivalent is the NIC's ptype).
 * Before every pass each pkt is put back as it was received: frags dropped,
 * data pointer, the first 128 bytes (all headers), offsets and tunnel
 * metadata restored.  That reset is timed apart from the GRO pass, as the
 * anchor does.  Mpps = input frames / time inside the GRO loop, one core.
 *
 * Modes, each with the TCP checksum verified (our rule, which DPDK does not
 * have) and trusted (input marked DATA_VALID, as after a NIC's rx checksum):
 *   burst32   gro_receive_batch() on bursts of 32 (flush at each burst end;
 *             DPDK "light")
 *   burst64   the same with 64 frames, one recvmmsg/UDP_GRO batch
 *   held      bursts of 32, runs held across bursts, GRO_FLUSH_ALL every 4
 *             bursts (DPDK "heavy" with flush_every 4)
 *
 * Printed per mode: Mpps in (mean over all passes, median and best pass,
 * as the anchor prints them), ns per frame at the median, average output frame size,
 * Gbit/s of TCP payload through GRO, segments per output frame, and the
 * reset cost.  --check (or always on the warm-up pass) verifies every output
 * frame: IP length, payload continuity across linear part and frags, and
 * total payload out == payload in.
 *
 * A figure, not a test: nothing here asserts a speed. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "offload/gro.h"
#include "packet/hdr.h"
#include "packet/pkt.h"
#include "parse/flow.h"
#include "parse/flow_extract.h"
#include "pcap_load.h"

enum {
	HDR_RESTORE = 128, /* bytes re-copied per frame by the reset (>= all headers) */
	MAX_BURST = 64,
};

static const char *const default_traces[] = {
	"bench/data/vxlan_tcp4.pcap",
	"bench/data/tcp4.pcap",
};

/* A frame as it was right after the port received and parsed it. */
struct frame_state {
	uint32_t size;
	uint16_t l2_ofs, l3_ofs, l4_ofs, payload_ofs;
	uint16_t tunnel_ofs, inner_l2_ofs, inner_l3_ofs, inner_l4_ofs, inner_payload_ofs;
	struct pkt_tunnel tunnel;
	uint8_t hdr[HDR_RESTORE];
	uint32_t tcp_payload; /* innermost TCP payload bytes (0 if not TCP) */
};

struct trace {
	struct pcap_trace in;      /* the frames, as received */
	struct frame_state *state; /* per frame, after parsing */
	struct flow_key *keys;     /* per frame: what the parse gave GRO */
	uint64_t payload_in;       /* TCP payload bytes of one pass */
};

struct out_stats {
	uint64_t frames, bytes, payload, bad;
	bool check;
};

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void save_state(const struct pkt *pkt, struct frame_state *st)
{
	st->size = pkt->size;
	st->l2_ofs = pkt->l2_ofs;
	st->l3_ofs = pkt->l3_ofs;
	st->l4_ofs = pkt->l4_ofs;
	st->payload_ofs = pkt->payload_ofs;
	st->tunnel_ofs = pkt->tunnel_ofs;
	st->inner_l2_ofs = pkt->inner_l2_ofs;
	st->inner_l3_ofs = pkt->inner_l3_ofs;
	st->inner_l4_ofs = pkt->inner_l4_ofs;
	st->inner_payload_ofs = pkt->inner_payload_ofs;
	st->tunnel = pkt->tunnel;
	memcpy(st->hdr, pkt->data, pkt->size < HDR_RESTORE ? pkt->size : HDR_RESTORE);
	uint16_t payload = pkt_innermost_payload(pkt);
	st->tcp_payload = payload != PKT_OFS_NONE ? pkt->size - payload : 0;
}

/* Puts every pkt back as received.  The bench keeps the reference it got
 * from pkt_alloc() for the pkt's whole life and hands GRO a second one per
 * pass, so GRO's pkt_free() never returns a pkt to the pool; pkt_reset()
 * drops the frags (and their references) a merged head holds. */
static void reset_pass(struct trace *t, bool data_valid)
{
	for (uint32_t i = 0; i < t->in.count; i++) {
		struct pkt *pkt = t->in.pkts[i];
		const struct frame_state *st = &t->state[i];
		pkt_reset(pkt);
		pkt->size = st->size;
		memcpy(pkt->data, st->hdr, st->size < HDR_RESTORE ? st->size : HDR_RESTORE);
		pkt->l2_ofs = st->l2_ofs;
		pkt->l3_ofs = st->l3_ofs;
		pkt->l4_ofs = st->l4_ofs;
		pkt->payload_ofs = st->payload_ofs;
		pkt->tunnel_ofs = st->tunnel_ofs;
		pkt->inner_l2_ofs = st->inner_l2_ofs;
		pkt->inner_l3_ofs = st->inner_l3_ofs;
		pkt->inner_l4_ofs = st->inner_l4_ofs;
		pkt->inner_payload_ofs = st->inner_payload_ofs;
		pkt->tunnel = st->tunnel;
		pkt->ol.flags = data_valid ? PKT_OL_DATA_VALID : 0;
		pkt_ref(pkt);
	}
}

static void trace_destroy(struct trace *t)
{
	if (!t)
		return;
	pcap_trace_release(&t->in);
	free(t->state);
	free(t->keys);
	free(t);
}

/* Loads the trace and parses every frame once (flow_extract, as the port
 * does before GRO), saving what reset_pass() puts back. */
static struct trace *trace_load(const char *path, uint32_t max_frames, bool small_buffers)
{
	struct trace *t = calloc(1, sizeof(*t));

	if (!t) {
		fprintf(stderr, "bench_gro: out of memory\n");
		return NULL;
	}
	if (pcap_trace_load(&t->in, "bench_gro", path, max_frames, small_buffers) < 0)
		goto err_destroy;
	t->state = calloc(t->in.count, sizeof(*t->state));
	t->keys = calloc(t->in.count, sizeof(*t->keys));
	if (!t->state || !t->keys) {
		fprintf(stderr, "bench_gro: %s: out of memory for %u frames\n", path, t->in.count);
		goto err_destroy;
	}
	for (uint32_t i = 0; i < t->in.count; i++) {
		struct pkt *pkt = t->in.pkts[i];
		if (flow_extract(pkt, VXLAN_DEFAULT_PORT, &t->keys[i]) != DROP_NONE)
			fprintf(stderr, "bench_gro: %s: frame %u does not parse\n", path, i + 1);
		save_state(pkt, &t->state[i]);
		t->payload_in += t->state[i].tcp_payload;
	}
	return t;

err_destroy:
	trace_destroy(t);
	return NULL;
}

/* Output check: the IP length covers the frame, and the payload bytes
 * increase by one (mod 256) from the first to the last, across frags. */
static bool frame_ok(const struct pkt *pkt, uint64_t *payload)
{
	static uint8_t flat[PKT_BUF_SIZE];
	uint32_t len = pkt_len(pkt);

	if (pkt->l3_ofs == PKT_OFS_NONE || pkt->payload_ofs == PKT_OFS_NONE)
		return false;
	if (pkt_copy_out(pkt, 0, len, flat) < 0)
		return false;
	const uint8_t *l3 = flat + pkt->l3_ofs;
	uint32_t ip_len = (uint32_t)(l3[2] << 8 | l3[3]);
	if ((l3[0] >> 4) == 4 ? ip_len != len - pkt->l3_ofs
			      : (uint32_t)(l3[4] << 8 | l3[5]) + IPV6_HDR_LEN != len - pkt->l3_ofs)
		return false;
	for (uint32_t i = pkt->payload_ofs + 1; i < len; i++)
		if (flat[i] != (uint8_t)(flat[i - 1] + 1))
			return false;
	*payload += len - pkt->payload_ofs;
	return true;
}

static void collect(void *aux, struct pkt *pkt, const struct flow_key *key)
{
	struct out_stats *out = aux;

	if (!key)
		out->bad++;
	out->frames++;
	out->bytes += pkt_len(pkt);
	if (out->check && !frame_ok(pkt, &out->payload))
		out->bad++;
	pkt_free(pkt);
}

#define MAX_PASSES 100000
static double pass_s[MAX_PASSES]; /* per-pass GRO time, for median and best */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

enum mode { MODE_BURST32, MODE_BURST64, MODE_HELD };
static const char *const mode_names[] = { "burst32", "burst64", "held" };

/* One pass over the trace; returns seconds inside GRO. */
static double gro_pass(struct gro_table *gro, struct trace *t, enum mode mode)
{
	uint32_t burst = mode == MODE_BURST64 ? 64 : 32;
	uint32_t bursts = 0;
	uint64_t now = 0;
	double start = now_seconds();

	for (uint32_t i = 0; i < t->in.count; i += burst) {
		uint32_t n = t->in.count - i < burst ? t->in.count - i : burst;
		if (mode == MODE_HELD) {
			gro_receive_burst(gro, &t->in.pkts[i], &t->keys[i], n, now);
			if (++bursts % 4 == 0)
				gro_flush(gro, GRO_FLUSH_ALL, now);
		} else {
			gro_receive_batch(gro, &t->in.pkts[i], &t->keys[i], n, now);
		}
		now += 1000; /* 1 µs a burst: far from the hold limit */
	}
	gro_flush(gro, GRO_FLUSH_ALL, now);
	return now_seconds() - start;
}

static void bench_mode(struct trace *t, enum mode mode, bool data_valid, double seconds, bool check)
{
	struct out_stats out = { .check = true };
	struct gro_config cfg = { .hold_ns = GRO_DEFAULT_HOLD_NS, .emit = collect, .emit_aux = &out };
	struct gro_table *gro;
	int err = gro_create(&cfg, &gro);
	if (err < 0) {
		fprintf(stderr, "gro_create: %s\n", strerror(-err));
		exit(1);
	}

	/* Warm-up pass, always checked. */
	reset_pass(t, data_valid);
	gro_pass(gro, t, mode);
	bool ok = out.bad == 0 && out.payload == t->payload_in;
	uint64_t frames_per_pass = out.frames, bytes_per_pass = out.bytes;

	out = (struct out_stats){ .check = check };
	double gro_s = 0, reset_s = 0;
	uint64_t passes = 0;
	while (gro_s + reset_s < seconds) {
		double t0 = now_seconds();
		reset_pass(t, data_valid);
		reset_s += now_seconds() - t0;
		double g = gro_pass(gro, t, mode);
		gro_s += g;
		if (passes < MAX_PASSES)
			pass_s[passes] = g;
		passes++;
	}
	uint64_t timed = passes < MAX_PASSES ? passes : MAX_PASSES;
	qsort(pass_s, timed, sizeof(pass_s[0]), cmp_double);
	if (check)
		ok = ok && out.bad == 0 && out.payload == passes * t->payload_in;

	struct gro_stats st;
	gro_get_stats(gro, &st);
	double in_pkts = (double)passes * t->in.count;
	printf("%-8s %-8s %8.2f %8.2f %8.2f %7.1f %9.0f %8.1f %6.2f %7.1f  %s\n", mode_names[mode],
	       data_valid ? "trusted" : "verify", in_pkts / gro_s / 1e6, t->in.count / pass_s[timed / 2] / 1e6,
	       t->in.count / pass_s[0] / 1e6, pass_s[timed / 2] * 1e9 / t->in.count, (double)bytes_per_pass / frames_per_pass,
	       (double)t->payload_in * 8 * passes / gro_s / 1e9, (double)t->in.count / frames_per_pass,
	       reset_s * 1e9 / in_pkts, ok ? "check OK" : "check FAIL");
	gro_destroy(gro);
}

int main(int argc, char **argv)
{
	uint32_t max_frames = UINT32_MAX;
	double seconds = 1.0;
	bool check = false, small_buffers = true;
	int first = 1;
	int only_mode = -1, only_csum = -1; /* -1: all */

	while (first < argc && argv[first][0] == '-') {
		if (strcmp(argv[first], "--check") == 0) {
			check = true;
			first++;
		} else if (first + 1 < argc && strcmp(argv[first], "-t") == 0) {
			seconds = atof(argv[first + 1]);
			first += 2;
		} else if (first + 1 < argc && strcmp(argv[first], "-m") == 0) {
			for (int m = 0; m <= MODE_HELD; m++)
				if (strcmp(argv[first + 1], mode_names[m]) == 0)
					only_mode = m;
			first += 2;
		} else if (first + 1 < argc && strcmp(argv[first], "-c") == 0) {
			only_csum = strcmp(argv[first + 1], "trusted") == 0;
			first += 2;
		} else if (first + 1 < argc && strcmp(argv[first], "-p") == 0) {
			small_buffers = strcmp(argv[first + 1], "big") != 0;
			first += 2;
		} else if (first + 1 < argc && strcmp(argv[first], "-n") == 0) {
			max_frames = (uint32_t)strtoul(argv[first + 1], NULL, 0);
			first += 2;
		} else {
			fprintf(stderr, "usage: %s [-t SECONDS] [-n FRAMES] [-m burst32|burst64|held]\n"
				"          [-c verify|trusted] [-p small|big] [--check] [FILE.pcap ...]\n", argv[0]);
			return 1;
		}
	}

	const char *const *paths = default_traces;
	int n_paths = (int)(sizeof(default_traces) / sizeof(default_traces[0]));
	if (first < argc) {
		paths = (const char *const *)&argv[first];
		n_paths = argc - first;
	}
	for (int p = 0; p < n_paths; p++) {
		struct trace *t = trace_load(paths[p], max_frames, small_buffers);
		if (!t)
			return 1;
		printf("trace=%s frames=%u payload_bytes_per_pass=%lu buffers=%s  (%.1f s per mode, one core)\n",
		       paths[p], t->in.count, (unsigned long)t->payload_in, small_buffers ? "small" : "big", seconds);
		printf("%-8s %-8s %8s %8s %8s %7s %9s %8s %6s %7s\n", "mode", "csum", "Mpps_mean",
		       "median", "best", "ns/pkt", "out_bytes", "Gbit/s", "segs", "reset_ns");
		for (int m = MODE_BURST32; m <= MODE_HELD; m++) {
			for (int valid = 0; valid <= 1; valid++)
				if ((only_mode < 0 || only_mode == m) && (only_csum < 0 || only_csum == valid))
					bench_mode(t, (enum mode)m, valid, seconds, check);
		}
		trace_destroy(t);
	}
	return 0;
}

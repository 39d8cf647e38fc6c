/* pcap_load: a pcap file copied once into pkts of one pool, as a port would
 * hand the frames over, for the benchmarks that replay a trace.
 *
 * Header-only (static functions): the Makefile links each bench/bench_*.c
 * with libvx.a alone.  Two passes over the file: count the frames (and find
 * the largest), then size the pool exactly and copy them in. */
#ifndef VX_BENCH_PCAP_LOAD_H
#define VX_BENCH_PCAP_LOAD_H

#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "packet/pkt.h"

struct pcap_trace {
	struct pkt_pool *pool;
	struct pkt **pkts;
	uint32_t count;
	uint64_t bytes; /* sum of the frame lengths */
};

/* Frees the pkts (dropping any frags a benchmark left on them), the array
 * and the pool; leaves `t` empty.  A no-op on an empty one. */
static inline void pcap_trace_release(struct pcap_trace *t)
{
	for (uint32_t i = 0; i < t->count; i++)
		pkt_reset(t->pkts[i]);
	for (uint32_t i = 0; i < t->count; i++)
		pkt_free(t->pkts[i]);
	free(t->pkts);
	pkt_pool_destroy(t->pool);
	*t = (struct pcap_trace){ 0 };
}

/* Loads at most `max_frames` frames of `path` into `t`.  small_buffers:
 * pkts from pkt_pool_create_sized() just big enough for the largest frame,
 * packed like a NIC driver's receive buffers (or DPDK's mbufs); else the
 * daemon's 64 KB buffers.  Errors are printed prefixed with `prog`.
 * Returns 0, or -1 with `t` empty. */
static inline int pcap_trace_load(struct pcap_trace *t, const char *prog, const char *path,
				  uint32_t max_frames, bool small_buffers)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *hdr;
	const uint8_t *bytes;
	uint32_t frames = 0, max_caplen = 0;
	pcap_t *pcap;

	*t = (struct pcap_trace){ 0 };
	pcap = pcap_open_offline(path, errbuf);
	if (!pcap) {
		fprintf(stderr, "%s: %s\n", prog, errbuf);
		return -1;
	}
	while (frames < max_frames && pcap_next_ex(pcap, &hdr, &bytes) == 1) {
		frames++;
		if (hdr->caplen > max_caplen)
			max_caplen = hdr->caplen;
	}
	pcap_close(pcap);
	if (frames == 0) {
		fprintf(stderr, "%s: %s: no frames\n", prog, path);
		return -1;
	}

	t->pkts = calloc(frames, sizeof(*t->pkts));
	if (small_buffers && max_caplen <= PKT_MAX_FRAME)
		t->pool = pkt_pool_create_sized(frames, PKT_HEADROOM + max_caplen + PKT_TAILROOM);
	else
		(void)pkt_pool_create(frames, &t->pool); /* NULL on failure, checked below */
	if (!t->pkts || !t->pool) {
		fprintf(stderr, "%s: %s: out of memory for %u frames\n", prog, path, frames);
		goto err_release;
	}

	pcap = pcap_open_offline(path, errbuf);
	if (!pcap) {
		fprintf(stderr, "%s: %s\n", prog, errbuf);
		goto err_release;
	}
	while (t->count < frames && pcap_next_ex(pcap, &hdr, &bytes) == 1) {
		struct pkt *pkt = pkt_alloc(t->pool);

		if (!pkt || pkt_set_data(pkt, bytes, hdr->caplen) < 0) {
			fprintf(stderr, "%s: %s: frame %u does not fit a pkt\n", prog, path, t->count + 1);
			pkt_free(pkt);
			pcap_close(pcap);
			goto err_release;
		}
		t->pkts[t->count++] = pkt;
		t->bytes += hdr->caplen;
	}
	pcap_close(pcap);
	return 0;

err_release:
	pcap_trace_release(t);
	return -1;
}

#endif /* VX_BENCH_PCAP_LOAD_H */

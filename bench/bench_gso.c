/* bench_gso: software GSO (+ VXLAN encapsulation) of 64 KB TSO frames on one
 * core, the transmit half of the "packets stay big" path.
 *
 * Cases:
 *  - vxlan-udp:   TCPv4, MSS 1398 (VM MTU 1450 over a 1500-byte underlay),
 *                 VXLAN header + inner segment at one stride: what the daemon
 *                 hands a UDP socket with UDP_SEGMENT (kernel adds outer IP/UDP);
 *  - vxlan-frame: the same as full frames, outer Eth/IPv4/UDP with the outer
 *                 UDP checksum computed (pcap / AF_PACKET shape);
 *  - plain-train: plain TCP GSO, MSS 1448, into one train;
 *  - plain-pkts:  plain TCP GSO, MSS 1448, one struct pkt per segment.
 *
 * Figures: input frames/s, output segments (Mpps) and Gbit/s of TCP payload,
 * best of several rounds (a shared machine only ever makes things slower).
 *
 * Usage: bench_gso [rounds] [ms_per_round]   (default 5 rounds of 200 ms) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include "offload/gso.h"
#include "offload/vxlan_encap.h"
#include "packet/csum.h"
#include "packet/pkt.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A 64 KB TCPv4 TSO frame as a TAP hands it over: IP total length 65535,
 * TCP with a 12-byte timestamp option, partial checksum, gso_size = mss. */
static void build_tso_frame(struct pkt *pkt, uint16_t mss)
{
	const uint32_t tcp_hdr = TCP_HDR_LEN + 12;
	const uint32_t ip_len = 65535;
	const uint32_t len = ETH_HDR_LEN + ip_len;
	pkt_reset(pkt);
	uint8_t *f = pkt_put(pkt, len);
	memset(f, 0, len);
	const uint8_t macs[12] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1 };
	memcpy(f, macs, 12);
	uint16_t type = htons(ETH_TYPE_IPV4);
	memcpy(f + 12, &type, 2);

	struct ipv4_hdr ip = { .ver_ihl = 0x45, .tot_len_be = htons((uint16_t)ip_len),
			       .id_be = htons(1), .frag_off_be = htons(IPV4_DF), .ttl = 64,
			       .proto = IP_PROTO_TCP, .src = { 192, 0, 2, 1 }, .dst = { 192, 0, 2, 2 } };
	memcpy(f + ETH_HDR_LEN, &ip, sizeof(ip));
	csum_ipv4_hdr_set(f + ETH_HDR_LEN, IPV4_HDR_LEN);

	uint8_t *th = f + ETH_HDR_LEN + IPV4_HDR_LEN;
	struct tcp_hdr tcp = { .src_be = htons(40000), .dst_be = htons(5201), .seq_be = htonl(1),
			       .ack_be = htonl(1), .doff_res = (uint8_t)(tcp_hdr / 4) << 4,
			       .flags = TCP_ACK | TCP_PSH, .window_be = htons(512) };
	memcpy(th, &tcp, sizeof(tcp));
	const uint8_t ts_opt[12] = { 1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2 };
	memcpy(th + TCP_HDR_LEN, ts_opt, sizeof(ts_opt));
	for (uint32_t i = ETH_HDR_LEN + IPV4_HDR_LEN + tcp_hdr; i < len; i++)
		f[i] = (uint8_t)(i * 131);
	uint32_t l4_len = ip_len - IPV4_HDR_LEN;
	uint16_t pseudo = csum_fold_nocomplement(csum_pseudo_ipv4(ip.src, ip.dst, IP_PROTO_TCP, l4_len));
	memcpy(th + TCP_CSUM_OFFSET, &pseudo, 2);

	pkt->l2_ofs = 0;
	pkt->l3_ofs = ETH_HDR_LEN;
	pkt->l4_ofs = ETH_HDR_LEN + IPV4_HDR_LEN;
	pkt->payload_ofs = (uint16_t)(pkt->l4_ofs + tcp_hdr);
	pkt->ol = (struct pkt_offload){ .flags = PKT_OL_NEEDS_CSUM, .gso_type = PKT_GSO_TCPV4,
					.hdr_len = pkt->payload_ofs, .gso_size = mss,
					.csum_start = pkt->l4_ofs, .csum_offset = TCP_CSUM_OFFSET };
}

enum bench_mode { MODE_TRAIN, MODE_PKTS };

struct bench_case {
	const char *name;
	enum bench_mode mode;
	enum gso_train_shape shape;
	uint16_t mss;
};

static uint8_t train_buf[2 * 65536 + 32768];

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	double round_s = (argc > 2 ? atof(argv[2]) : 200) / 1000.0;
	if (rounds < 1)
		rounds = 1;

	struct pkt_pool *pool;
	if (pkt_pool_create(GSO_MAX_SEGS + 2, &pool) < 0) {
		fprintf(stderr, "bench_gso: no memory for the pool\n");
		return 1;
	}
	struct pkt *in = pkt_alloc(pool);
	struct vxlan_encap encap = { .family = 4, .vni = 99,
				     .src_mac = { 2, 0, 0, 0, 1, 1 }, .dst_mac = { 2, 0, 0, 0, 1, 2 },
				     .src_ip = { 198, 51, 100, 1 }, .dst_ip = { 198, 51, 100, 2 } };
	static struct pkt *segs[GSO_MAX_SEGS];

	const struct bench_case cases[] = {
		{ "vxlan-udp   (MSS 1398, socket shape)", MODE_TRAIN, GSO_TRAIN_VXLAN_UDP, 1398 },
		{ "vxlan-frame (MSS 1398, outer csum)  ", MODE_TRAIN, GSO_TRAIN_VXLAN_FRAME, 1398 },
		{ "plain-train (MSS 1448)              ", MODE_TRAIN, GSO_TRAIN_PLAIN, 1448 },
		{ "plain-pkts  (MSS 1448)              ", MODE_PKTS, GSO_TRAIN_PLAIN, 1448 },
	};
	printf("bench_gso: 64 KB TCPv4 TSO frames (65483 B payload), one core, best of %d x %.0f ms\n",
	       rounds, round_s * 1000);
	printf("%-38s %12s %10s %12s %10s\n", "case", "frames/s", "Mpps out", "Gbit/s pay", "segs/frame");
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct bench_case *bc = &cases[c];
		build_tso_frame(in, bc->mss);
		struct gso_plan plan;
		if (gso_plan(in, &plan)) {
			fprintf(stderr, "bench_gso: bad frame\n");
			return 1;
		}
		double best_fps = 0;
		uint16_t ip_id = 0;
		for (int r = 0; r < rounds; r++) {
			uint64_t frames = 0;
			double t0 = now_s(), t1;
			do {
				for (int k = 0; k < 16; k++) {
					if (bc->mode == MODE_TRAIN) {
						struct gso_train t = { .buf = train_buf, .cap = sizeof(train_buf) };
						if (gso_ref_train_build(in, bc->shape, &encap, &ip_id, 0, &t)) {
							fprintf(stderr, "bench_gso: train failed\n");
							return 1;
						}
					} else {
						int n = gso_ref_segment(in, 0, pool, segs, GSO_MAX_SEGS);
						if (n < 0) {
							fprintf(stderr, "bench_gso: segment failed\n");
							return 1;
						}
						for (int i = 0; i < n; i++)
							pkt_free(segs[i]);
					}
				}
				frames += 16;
				t1 = now_s();
			} while (t1 - t0 < round_s);
			double fps = (double)frames / (t1 - t0);
			if (fps > best_fps)
				best_fps = fps;
		}
		printf("%-38s %12.0f %10.3f %12.2f %10u\n", bc->name, best_fps,
		       best_fps * plan.nr_segs / 1e6, best_fps * plan.payload_len * 8 / 1e9, plan.nr_segs);
	}
	pkt_free(in);
	pkt_pool_destroy(pool);
	return 0;
}

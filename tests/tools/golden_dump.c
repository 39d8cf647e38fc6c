/* golden_dump: the parser's view of a pcap, one canonical line per frame.
 *
 *   golden_dump [-s] FILE.pcap [VXLAN_PORT]      (VXLAN_PORT defaults to 4789)
 *
 * Runs flow_extract() on every frame and prints either
 *
 *   frame=N drop=<reason name>
 *
 * or the key as space-separated name=value pairs, always all of them and in
 * this order (tests/golden/tshark_to_key.py prints the same from tshark):
 *
 *   frame tun tun_src tun_dst tun_sport tun_dport vni
 *   dl_src dl_dst vlans dl_type
 *   nw_family nw_src nw_dst nw_proto nw_tos nw_ttl nw_frag ipv6_label arp_sha arp_tha
 *   tp_src tp_dst tcp_flags mss wscale sackok sack tsval tsecr len
 *   ofs vx_ofs outer_ofs
 *
 * Conventions: tun is the underlay family (4, 6) or "-"; vlans is
 * "tpid/tci,..." in hex, outer tag first, or "-"; numbers are decimal except
 * dl_type, nw_tos, ipv6_label and tcp_flags (hex).  Addresses are printed in
 * the family's notation (ARP's spa/tpa as IPv4); an address that should be
 * absent prints "-" when zero and as raw hex otherwise, so a parser that
 * leaves stale bytes in the key shows up as a mismatch.  TCP options print
 * "-" unless their bit is set in tcp_opts.present.  len is the frame's length
 * after flow_extract() (which cuts Ethernet padding past the innermost IP
 * datagram), for IP frames only ("-" otherwise).  ofs is the innermost frame's
 * "l2,l3,l4,payload" offsets (pkt->inner_* when tunnelled), vx_ofs the VXLAN
 * header's and outer_ofs the outer frame's when tunnelled; "-" is absent.
 *
 * -s ("as from a socket"): a frame that flow_extract() decapsulates is parsed
 * a second time the way the VXLAN port receives it: the UDP payload alone
 * (VXLAN header to the end of the outer UDP datagram) through
 * flow_extract_vxlan(), with pkt->tunnel as the underlay socket would fill
 * it; that key is printed instead (len and offsets count the outer headers
 * back in; outer_ofs, which that path has none of, are the full parse's), so
 * the same tshark lines check both entry points.
 *
 * Exit status: 0 when the file was read (whatever the frames parsed to),
 * 1 on a usage or file error. */
#include <arpa/inet.h>
#include <pcap/pcap.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "packet/drop_reason.h"
#include "packet/hdr.h"
#include "packet/pkt.h"
#include "parse/flow.h"
#include "parse/flow_extract.h"

static bool all_zero(const uint8_t *bytes, size_t size)
{
	for (size_t i = 0; i < size; i++)
		if (bytes[i])
			return false;
	return true;
}

static void print_hex(const uint8_t *bytes, size_t size)
{
	fputs("hex:", stdout);
	for (size_t i = 0; i < size; i++)
		printf("%02x", bytes[i]);
}

/* An address of `family` (4 or 6); any other family means "should be absent". */
static void print_addr(const char *name, int family, const uint8_t addr[16])
{
	char text[INET6_ADDRSTRLEN];

	printf(" %s=", name);
	if (family == 4 && all_zero(addr + 4, 12))
		fputs(inet_ntop(AF_INET, addr, text, sizeof(text)), stdout);
	else if (family == 6)
		fputs(inet_ntop(AF_INET6, addr, text, sizeof(text)), stdout);
	else if (all_zero(addr, 16))
		putchar('-');
	else
		print_hex(addr, 16);
}

static void print_mac(const char *name, const uint8_t mac[6], bool present)
{
	printf(" %s=", name);
	if (!present && all_zero(mac, 6))
		putchar('-');
	else
		printf("%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
}

static void print_opt(const char *name, const struct tcp_opts *opts, uint8_t bit, uint32_t value)
{
	if (opts->present & bit)
		printf(" %s=%u", name, value);
	else
		printf(" %s=-", name);
}

static void print_ofs(const char *name, const uint16_t ofs[4], uint32_t shift)
{
	printf(" %s=", name);
	for (int i = 0; i < 4; i++) {
		if (i)
			putchar(',');
		if (ofs[i] == PKT_OFS_NONE)
			putchar('-');
		else
			printf("%u", ofs[i] + shift);
	}
}

/* Offsets as printed: `pkt` is the parsed pkt, whose bytes start `shift`
 * bytes into the captured frame; `full` the parse of the whole frame (the
 * same pkt unless -s). */
static void print_offsets(const struct pkt *pkt, uint32_t shift, const struct pkt *full)
{
	bool tunnelled = pkt->tunnel_ofs != PKT_OFS_NONE;
	const uint16_t inner[4] = { pkt->inner_l2_ofs, pkt->inner_l3_ofs, pkt->inner_l4_ofs,
				    pkt->inner_payload_ofs };
	const uint16_t outer[4] = { full->l2_ofs, full->l3_ofs, full->l4_ofs, full->payload_ofs };

	print_ofs("ofs", tunnelled ? inner : outer, shift);
	if (tunnelled) {
		printf(" vx_ofs=%u", pkt->tunnel_ofs + shift);
		print_ofs("outer_ofs", outer, 0);
	} else {
		printf(" vx_ofs=- outer_ofs=-");
	}
}

/* `len`: the frame's length after parsing. */
static void print_key(const struct flow_key *k, uint32_t len)
{
	bool tunnelled = k->tun_family != 0;

	if (tunnelled)
		printf(" tun=%u", k->tun_family);
	else
		printf(" tun=-");
	print_addr("tun_src", k->tun_family, k->tun_src);
	print_addr("tun_dst", k->tun_family, k->tun_dst);
	printf(" tun_sport=%u tun_dport=%u vni=%u", k->tun_src_port, k->tun_dst_port, k->tun_vni);

	print_mac("dl_src", k->dl_src, true);
	print_mac("dl_dst", k->dl_dst, true);
	printf(" vlans=");
	if (k->n_vlans == 0)
		putchar('-');
	for (unsigned i = 0; i < k->n_vlans && i < 2; i++)
		printf("%s%04x/%04x", i ? "," : "", k->vlan_tpid[i], k->vlan_tci[i]);
	printf(" dl_type=0x%04x", k->dl_type);

	bool arp = k->dl_type == ETH_TYPE_ARP && k->nw_family == 0;
	int addr_family = arp ? 4 : k->nw_family;
	printf(" nw_family=%u", k->nw_family);
	print_addr("nw_src", addr_family, k->nw_src);
	print_addr("nw_dst", addr_family, k->nw_dst);
	printf(" nw_proto=%u nw_tos=0x%02x nw_ttl=%u nw_frag=%u ipv6_label=0x%05x",
	       k->nw_proto, k->nw_tos, k->nw_ttl, k->nw_frag, k->ipv6_label);
	print_mac("arp_sha", k->arp_sha, arp);
	print_mac("arp_tha", k->arp_tha, arp);

	printf(" tp_src=%u tp_dst=%u tcp_flags=0x%03x", k->tp_src, k->tp_dst, k->tcp_flags);
	const struct tcp_opts *o = &k->tcp_opts;
	print_opt("mss", o, TCP_OPTS_MSS, o->mss);
	print_opt("wscale", o, TCP_OPTS_WSCALE, o->wscale);
	printf(" sackok=%s sack=%s", o->present & TCP_OPTS_SACK_PERM ? "1" : "-",
	       o->present & TCP_OPTS_SACK ? "1" : "-");
	print_opt("tsval", o, TCP_OPTS_TIMESTAMP, o->tsval);
	print_opt("tsecr", o, TCP_OPTS_TIMESTAMP, o->tsecr);
	if (k->nw_family == 4 || k->nw_family == 6)
		printf(" len=%u", len);
	else
		printf(" len=-");
}

/* The -s path: re-parse the UDP payload of a decapsulated frame (original,
 * untrimmed bytes) with flow_extract_vxlan().  Returns its verdict; `out` and
 * `*outer_len` (bytes before the VXLAN header) describe the new pkt. */
static enum drop_reason parse_as_from_socket(struct pkt_pool *pool, const uint8_t *frame, uint32_t caplen,
					     const struct pkt *decapped, struct flow_key *key,
					     struct pkt **out, uint32_t *outer_len)
{
	uint32_t vx = decapped->tunnel_ofs, l4 = decapped->l4_ofs;
	uint16_t udp_len_be;

	memcpy(&udp_len_be, frame + l4 + offsetof(struct udp_hdr, len_be), sizeof(udp_len_be));
	uint32_t udp_end = l4 + ntohs(udp_len_be);
	struct pkt *pkt = pkt_alloc(pool);
	if (!pkt || udp_end > caplen || udp_end < vx || pkt_set_data(pkt, frame + vx, udp_end - vx) < 0) {
		fprintf(stderr, "golden_dump: cannot build the socket view of a frame\n");
		exit(1);
	}
	pkt->tunnel = decapped->tunnel;
	*out = pkt;
	*outer_len = vx;
	memset(key, 0xa5, sizeof(*key));
	return flow_extract_vxlan(pkt, key);
}

int main(int argc, char **argv)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pkt_pool *pool = NULL;
	pcap_t *pcap = NULL;
	bool from_socket = false;
	int status = 1;

	if (argc > 1 && strcmp(argv[1], "-s") == 0) {
		from_socket = true;
		argv++;
		argc--;
	}
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: golden_dump [-s] FILE.pcap [VXLAN_PORT]\n");
		return 1;
	}
	uint16_t vxlan_port = argc == 3 ? (uint16_t)strtoul(argv[2], NULL, 0) : VXLAN_DEFAULT_PORT;

	pcap = pcap_open_offline(argv[1], errbuf);
	if (!pcap) {
		fprintf(stderr, "golden_dump: %s\n", errbuf);
		goto out;
	}
	if (pcap_datalink(pcap) != DLT_EN10MB) {
		fprintf(stderr, "golden_dump: %s: not an Ethernet capture\n", argv[1]);
		goto out_close;
	}
	if (pkt_pool_create(2, &pool) < 0) {
		fprintf(stderr, "golden_dump: out of memory\n");
		goto out_close;
	}

	struct pcap_pkthdr *hdr;
	const uint8_t *bytes;
	unsigned long frame = 0;
	int rc;
	while ((rc = pcap_next_ex(pcap, &hdr, &bytes)) == 1) {
		struct pkt *pkt = pkt_alloc(pool), *shown = pkt;
		uint32_t outer_len = 0;
		struct flow_key key;

		frame++;
		if (!pkt || pkt_set_data(pkt, bytes, hdr->caplen) < 0) {
			fprintf(stderr, "golden_dump: frame %lu: %u bytes do not fit a pkt\n", frame, hdr->caplen);
			pkt_free(pkt);
			goto out_pool;
		}
		/* Garbage, not zeros, so fields the parser forgets to set show up. */
		memset(&key, 0xa5, sizeof(key));
		enum drop_reason reason = flow_extract(pkt, vxlan_port, &key);
		if (from_socket && reason == DROP_NONE && key.tun_family != 0)
			reason = parse_as_from_socket(pool, bytes, hdr->caplen, pkt, &key, &shown, &outer_len);
		printf("frame=%lu", frame);
		if (reason != DROP_NONE)
			printf(" drop=%s\n", drop_reason_name(reason));
		else {
			print_key(&key, pkt_len(shown) + outer_len);
			print_offsets(shown, outer_len, pkt);
			putchar('\n');
		}
		if (shown != pkt)
			pkt_free(shown);
		pkt_free(pkt);
	}
	if (rc != PCAP_ERROR_BREAK) {
		fprintf(stderr, "golden_dump: %s: %s\n", argv[1], pcap_geterr(pcap));
		goto out_pool;
	}
	status = 0;
out_pool:
	pkt_pool_destroy(pool);
out_close:
	pcap_close(pcap);
out:
	fflush(stdout);
	return status;
}

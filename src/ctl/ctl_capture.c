/* ctl_capture: capture records and their one-line summaries (see
 * ctl_capture.h).  A summary decodes just enough to tell frames apart:
 * MACs, ethertype (through VLAN tags), IP addresses, the L4 protocol and
 * ports, ICMP types, and the VNI and inner frame of a VXLAN datagram. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ctl/ctl_capture.h"
#include "ctl/ctl_cmd.h"
#include "packet/hdr.h"

int ctl_capture_next(const uint8_t *body, size_t size, size_t *off, struct dp_capture_rec *rec,
		     const uint8_t **frame)
{
	if (*off >= size)
		return 0;
	if (size - *off < sizeof(*rec))
		return -EPROTO;
	memcpy(rec, body + *off, sizeof(*rec));
	if (rec->caplen > CTL_CAPTURE_SNAPLEN || rec->caplen > rec->len ||
	    (rec->dir != CTL_CAPTURE_IN && rec->dir != CTL_CAPTURE_OUT) || rec->outer > 1)
		return -EPROTO;
	size_t need = dp_capture_rec_size(rec->caplen);
	if (size - *off < need && size - *off < sizeof(*rec) + rec->caplen)
		return -EPROTO;
	*frame = body + *off + sizeof(*rec);
	*off += need < size - *off ? need : size - *off;
	return 1;
}

/* A bounded appender: stops at the end of buf. */
struct line {
	char *buf;
	size_t size, len;
};

static void put(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct line *l, const char *fmt, ...)
{
	if (l->len + 1 >= l->size)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(l->buf + l->len, l->size - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += (size_t)n < l->size - l->len ? (size_t)n : l->size - l->len - 1;
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put_mac(struct line *l, const uint8_t *m)
{
	put(l, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

static void summarize_eth(struct line *l, const uint8_t *f, size_t len, int depth);

/* "IPvN A.SPORT > B.DPORT: UDP" (then a VXLAN datagram's inner frame),
 * "IPvN A > B: ICMP echo request", or the protocol number. */
static void summarize_l4(struct line *l, const char *ipv, const char *a, const char *b, uint8_t proto,
			 const uint8_t *p, size_t len, int depth)
{
	if ((proto == IP_PROTO_TCP || proto == IP_PROTO_UDP) && len >= 4) {
		uint16_t sport = be16(p), dport = be16(p + 2);
		put(l, "%s %s.%u > %s.%u: %s", ipv, a, sport, b, dport, proto == IP_PROTO_TCP ? "TCP" : "UDP");
		if (proto == IP_PROTO_UDP && len >= UDP_HDR_LEN + VXLAN_HDR_LEN && depth == 0 &&
		    dport == VXLAN_DEFAULT_PORT && (p[UDP_HDR_LEN] & 0x08)) {
			const uint8_t *vx = p + UDP_HDR_LEN;
			uint32_t vni = (uint32_t)vx[4] << 16 | (uint32_t)vx[5] << 8 | vx[6];
			put(l, " VXLAN vni %u: ", vni);
			summarize_eth(l, vx + VXLAN_HDR_LEN, len - UDP_HDR_LEN - VXLAN_HDR_LEN, depth + 1);
		}
		return;
	}
	put(l, "%s %s > %s", ipv, a, b);
	if (proto == IP_PROTO_ICMP && len >= 1)
		put(l, ": ICMP%s", p[0] == 8 ? " echo request" : p[0] == 0 ? " echo reply" : "");
	else if (proto == IP_PROTO_ICMPV6 && len >= 1)
		put(l, ": ICMP6%s", p[0] == 128 ? " echo request" : p[0] == 129 ? " echo reply" : "");
	else
		put(l, ": proto %u", proto);
}

static void summarize_ip(struct line *l, uint16_t type, const uint8_t *p, size_t len, int depth)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
	if (type == ETH_TYPE_IPV4 && len >= IPV4_HDR_LEN) {
		size_t ihl = (size_t)(p[0] & 0x0f) * 4;
		inet_ntop(AF_INET, p + 12, a, sizeof(a));
		inet_ntop(AF_INET, p + 16, b, sizeof(b));
		bool whole = ihl >= IPV4_HDR_LEN && ihl <= len && !(be16(p + 6) & IPV4_FRAG_OFFSET_MASK);
		summarize_l4(l, "IPv4", a, b, whole ? p[9] : 0xff, whole ? p + ihl : p, whole ? len - ihl : 0,
			     depth);
	} else if (type == ETH_TYPE_IPV6 && len >= IPV6_HDR_LEN) {
		inet_ntop(AF_INET6, p + 8, a, sizeof(a));
		inet_ntop(AF_INET6, p + 24, b, sizeof(b));
		summarize_l4(l, "IPv6", a, b, p[6], p + IPV6_HDR_LEN, len - IPV6_HDR_LEN, depth);
	} else if (type == ETH_TYPE_ARP) {
		put(l, "ARP");
	} else {
		put(l, "ethertype 0x%04x", type);
	}
}

static void summarize_eth(struct line *l, const uint8_t *f, size_t len, int depth)
{
	if (len < ETH_HDR_LEN) {
		put(l, "truncated frame");
		return;
	}
	put_mac(l, f + 6);
	put(l, " > ");
	put_mac(l, f);
	put(l, ", ");
	size_t ofs = 12;
	uint16_t type = be16(f + ofs);
	for (int tags = 0; tags < 2 && (type == ETH_TYPE_VLAN || type == ETH_TYPE_QINQ) &&
			   len >= ofs + 6; tags++) {
		put(l, "vlan %u, ", be16(f + ofs + 2) & 0x0fff);
		ofs += 4;
		type = be16(f + ofs);
	}
	ofs += 2;
	summarize_ip(l, type, f + ofs, len - ofs, depth);
}

int ctl_capture_summary(const struct dp_capture_rec *rec, const uint8_t *frame, char *buf, size_t size)
{
	struct line l = { .buf = buf, .size = size };
	if (size == 0)
		return 0;
	buf[0] = '\0';
	time_t secs = (time_t)(rec->ts_ns / 1000000000ull);
	struct tm tm;
	localtime_r(&secs, &tm);
	put(&l, "%02d:%02d:%02d.%06u %-3s ", tm.tm_hour, tm.tm_min, tm.tm_sec,
	    (unsigned)(rec->ts_ns % 1000000000ull / 1000), rec->dir == CTL_CAPTURE_IN ? "in" : "out");
	summarize_eth(&l, frame, rec->caplen, 0);
	put(&l, ", length %u", rec->len);
	return (int)l.len;
}

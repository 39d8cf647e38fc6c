/* gro_diff: a case's frames on the wire, what a GRO made of them (the
 * output frames by flow, first seq, length, gso_size/type), and our GRO run
 * on them (gro_diff.h). */
#include "gro_diff.h"

/* ---- frames and results -------------------------------------------------- */


/* One output frame, described by what GRO decides. */


/* The frames of a case; `vxlan` wraps each in l->outer[i]. */
int build_wire(const struct seg_list *l, bool vxlan, struct wire *w)
{
	static uint8_t inner[FRAME_CAP];
	w->n = 0;
	for (unsigned i = 0; i < l->n; i++) {
		size_t len;
		if (vxlan) {
			len = fb_build(&l->f[i], inner, sizeof(inner), NULL);
			if (len)
				len = fb_wrap_vxlan(&l->outer[i], inner, len, w->bytes[i], FRAME_CAP);
		} else {
			len = fb_build(&l->f[i], w->bytes[i], FRAME_CAP, NULL);
		}
		if (len == 0)
			return -EINVAL;
		w->len[i] = len;
		w->n++;
	}
	return 0;
}

/* A VXLAN frame (outer IPv4 without options, UDP to port 4789) is seen
 * by its inner frame: lengths are compared on the inner frame, which is
 * what ours emits (decapsulated). */
void frame_decap(const uint8_t **p, size_t *len)
{
	const uint8_t *f = *p;
	if (*len < VXLAN_ENCAP_LEN_IPV4 + 14 || f[12] != 0x08 || f[13] != 0x00 || f[14] != 0x45 ||
	    f[14 + 9] != IP_PROTO_UDP || (f[36] << 8 | f[37]) != VXLAN_DEFAULT_PORT)
		return;
	*p += VXLAN_ENCAP_LEN_IPV4;
	*len -= VXLAN_ENCAP_LEN_IPV4;
}

/* Port and seq from the first bytes of a frame; false if not TCP over
 * IPv4/IPv6 without extension headers. */
bool frame_tcp_id(const uint8_t *p, size_t len, uint16_t *src_port, uint32_t *seq,
			 uint32_t *payload)
{
	if (len < 14 + 20 + 20)
		return false;
	uint16_t type = (uint16_t)(p[12] << 8 | p[13]);
	size_t l4, l3_end;
	if (type == ETH_TYPE_IPV4 && (p[14] >> 4) == 4 && p[14 + 9] == IP_PROTO_TCP) {
		l4 = 14 + (size_t)(p[14] & 0xf) * 4;
		l3_end = 14 + (size_t)(p[16] << 8 | p[17]);
	} else if (type == ETH_TYPE_IPV6 && len >= 14 + 40 + 20) {
		uint8_t next = p[14 + 6];
		l4 = 14 + 40;
		l3_end = l4 + (size_t)(p[18] << 8 | p[19]);
		/* Options and routing headers, as the ext header cases use. */
		while (next == IP_PROTO_HOPOPTS || next == IP_PROTO_DSTOPTS || next == IP_PROTO_ROUTING) {
			if (l4 + 8 > len)
				return false;
			next = p[l4];
			l4 += ((size_t)p[l4 + 1] + 1) * 8;
		}
		if (next != IP_PROTO_TCP)
			return false;
	} else {
		return false;
	}
	if (l4 + 20 > len)
		return false;
	size_t doff = (size_t)(p[l4 + 12] >> 4) * 4;
	*src_port = (uint16_t)(p[l4] << 8 | p[l4 + 1]);
	*seq = (uint32_t)p[l4 + 4] << 24 | (uint32_t)p[l4 + 5] << 16 | (uint32_t)p[l4 + 6] << 8 | p[l4 + 7];
	*payload = l3_end > l4 + doff ? (uint32_t)(l3_end - l4 - doff) : 0;
	return true;
}

/* Segments a frame carries: payload / gso_size rounded up, 1 if not merged. */
unsigned frame_segments(const struct out_frame *f)
{
	return f->gso_size ? (f->payload + f->gso_size - 1) / f->gso_size : 1;
}

/* "3,4": segments per frame, the form of gd_case.ours_expect. */
void result_shape(const struct result *r, char *buf, size_t cap)
{
	size_t used = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < r->n && used < cap; i++)
		used += (size_t)snprintf(buf + used, cap - used, "%s%u", i ? "," : "",
					 frame_segments(&r->f[i]));
}

void result_add(struct result *r, const struct out_frame *f)
{
	if (r->n >= MAX_OUT) {
		r->overflow = true;
		return;
	}
	r->f[r->n++] = *f;
}

/* Stable sort by flow: the order within a flow is GRO's business, the order
 * between flows is the hash table's (different in the kernel and here). */
void result_sort(struct result *r)
{
	for (unsigned i = 1; i < r->n; i++) {
		struct out_frame x = r->f[i];
		unsigned j = i;
		while (j > 0 && r->f[j - 1].src_port > x.src_port) {
			r->f[j] = r->f[j - 1];
			j--;
		}
		r->f[j] = x;
	}
}

/* Within each flow, by seq: for cases whose order legitimately differs. */
void result_sort_seq(struct result *r)
{
	for (unsigned i = 1; i < r->n; i++) {
		struct out_frame x = r->f[i];
		unsigned j = i;
		while (j > 0 && (r->f[j - 1].src_port > x.src_port ||
				 (r->f[j - 1].src_port == x.src_port &&
				  (int32_t)(r->f[j - 1].seq - x.seq) > 0))) {
			r->f[j] = r->f[j - 1];
			j--;
		}
		r->f[j] = x;
	}
}

bool result_equal(const struct result *a, const struct result *b)
{
	if (a->n != b->n || a->overflow || b->overflow)
		return false;
	for (unsigned i = 0; i < a->n; i++)
		if (a->f[i].src_port != b->f[i].src_port || a->f[i].seq != b->f[i].seq ||
		    a->f[i].len != b->f[i].len || a->f[i].gso_size != b->f[i].gso_size ||
		    a->f[i].gso_type != b->f[i].gso_type)
			return false;
	return true;
}

static const char *gso_name(uint8_t t)
{
	switch (t) {
	case VIRTIO_NET_HDR_GSO_NONE: return "-";
	case VIRTIO_NET_HDR_GSO_TCPV4: return "tcp4";
	case VIRTIO_NET_HDR_GSO_TCPV6: return "tcp6";
	case VIRTIO_NET_HDR_GSO_TCPV4 | VIRTIO_NET_HDR_GSO_ECN: return "tcp4+ecn";
	case VIRTIO_NET_HDR_GSO_TCPV6 | VIRTIO_NET_HDR_GSO_ECN: return "tcp6+ecn";
	default: return "?";
	}
}

void result_print(const char *who, const struct result *r, uint32_t seq_base)
{
	printf("    %-6s %2u frames:", who, r->n);
	for (unsigned i = 0; i < r->n; i++)
		printf(" [p%u +%u %u/%u %s]", r->f[i].src_port, r->f[i].seq - seq_base, r->f[i].len,
		       r->f[i].gso_size, gso_name(r->f[i].gso_type));
	printf("%s\n", r->overflow ? " (overflow)" : "");
}

/* ---- our GRO ------------------------------------------------------------ */

struct ours {
	struct pkt_pool *pool;
	struct result *res;
};

static void ours_emit(void *aux, struct pkt *pkt, const struct flow_key *key)
{
	struct ours *o = aux;
	(void)key; /* the comparison is of the frames themselves */
	uint8_t head[128];
	uint32_t head_len = pkt_len(pkt) < sizeof(head) ? pkt_len(pkt) : sizeof(head);
	struct out_frame f = { .len = pkt_len(pkt), .gso_size = pkt->ol.gso_size,
			       .gso_type = pkt->ol.gso_type };
	if (pkt_copy_out(pkt, 0, head_len, head) == 0 &&
	    frame_tcp_id(head, head_len, &f.src_port, &f.seq, &f.payload))
		result_add(o->res, &f);
	pkt_free(pkt);
}

int run_ours(const struct wire *w, struct result *res)
{
	struct ours o = { .res = res };
	struct pkt *pkts[MAX_SEGS];
	static struct flow_key keys[MAX_SEGS];
	unsigned n = 0;
	int err = -ENOMEM;

	memset(res, 0, sizeof(*res));
	err = pkt_pool_create(2 * MAX_SEGS, &o.pool);
	if (err < 0)
		return err;
	struct gro_config cfg = { .emit = ours_emit, .emit_aux = &o };
	struct gro_table *gro;
	err = gro_create(&cfg, &gro);
	if (err < 0)
		goto out_pool;
	for (; n < w->n; n++) {
		pkts[n] = pkt_alloc(o.pool);
		if (!pkts[n] || pkt_set_data(pkts[n], w->bytes[n], (uint32_t)w->len[n]) != 0) {
			pkt_free(pkts[n]);
			err = -ENOMEM;
			goto out_pkts;
		}
		/* The datapath drops what the parser refuses before GRO;
		 * no case builds such a frame (TCP checksums are GRO's
		 * business, not the parser's). */
		if (flow_extract(pkts[n], VXLAN_DEFAULT_PORT, &keys[n]) != DROP_NONE) {
			err = -EINVAL;
			n++;
			goto out_pkts;
		}
	}
	gro_receive_batch(gro, pkts, keys, n, 0);
	n = 0;
	err = 0;
out_pkts:
	for (unsigned i = 0; i < n; i++)
		pkt_free(pkts[i]);
	gro_destroy(gro);
out_pool:
	pkt_pool_destroy(o.pool);
	return err;
}

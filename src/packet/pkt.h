/* struct pkt: the one packet buffer type of vxswitch.
 *
 * Layout of the buffer:
 *
 *   base                data                  data+size
 *   |<-- headroom -->|<-- linear frame -->|<-- tailroom -->|
 *
 * followed, logically, by frags[0..nr_frags): payload pieces that belong to
 * the frame but live elsewhere (in other pkts' buffers).  GRO appends the
 * payload of merged segments as frags instead of copying it; a port writes
 * the frame with one writev over the linear part and the frags.
 *
 * Ownership: a pkt is reference counted.  A frag holds a reference to the pkt
 * whose buffer its bytes live in, dropped when the frame is freed.  pkt_free()
 * drops one reference; at zero the pkt returns to its pool.  Bytes a frag
 * points at are read-only for everyone (other frames may share them; see
 * pkt_clone()).
 *
 * Offsets (l2_ofs ...) count from `data`; PKT_OFS_NONE means absent.  The
 * outer layers are l2/l3/l4; when the frame carries VXLAN, tunnel_ofs points
 * at the VXLAN header and inner_* at the encapsulated frame.  pkt_push() and
 * pkt_pull() keep the offsets pointing at the same bytes.
 *
 * Offload metadata (`ol`) has the meaning of struct virtio_net_hdr, in host
 * byte order: see packet/vnet_hdr.h.
 *
 * Thread-safety: a pool and its pkts belong to one worker; nothing here is
 * locked. */
#ifndef VX_PACKET_PKT_H
#define VX_PACKET_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pkt_limits {
	/* Room for outer Ethernet+IPv6+UDP+VXLAN (70 bytes), rounded up so
	 * the inner frame keeps a cache-friendly alignment. */
	PKT_HEADROOM = 128,
	/* A 64 KB IP datagram plus Ethernet and two VLAN tags. */
	PKT_MAX_FRAME = 65535 + 14 + 8,
	PKT_TAILROOM = 64,
	PKT_BUF_SIZE = PKT_HEADROOM + PKT_MAX_FRAME + PKT_TAILROOM,
	/* Enough for a 64 KB frame merged from 1-MSS segments of >= 1100
	 * bytes; GRO ends a run when the frags are used up. */
	PKT_MAX_FRAGS = 64,
};

#define PKT_OFS_NONE UINT16_MAX

/* virtio_net_hdr flags and gso types, host order (values as in the spec). */
enum pkt_ol_flags {
	PKT_OL_NEEDS_CSUM = 1,
	PKT_OL_DATA_VALID = 2,
};

enum pkt_gso_type {
	PKT_GSO_NONE = 0,
	PKT_GSO_TCPV4 = 1,
	PKT_GSO_UDP = 3,
	PKT_GSO_TCPV6 = 4,
	PKT_GSO_UDP_L4 = 5,
	PKT_GSO_ECN = 0x80,
};

struct pkt_offload {
	uint8_t flags;      /* PKT_OL_* */
	uint8_t gso_type;   /* PKT_GSO_*, possibly | PKT_GSO_ECN */
	uint16_t hdr_len;
	uint16_t gso_size;
	uint16_t csum_start;
	uint16_t csum_offset;
};

/* tunnel.tx_key: what a flower `tunnel_key set` chose for the vxlan port
 * the frame is sent to (OVS's flow-based tunnels: the key is the frame's,
 * not the port's).  Zero on every received frame, so the port's own VNI,
 * UDP port and checksum setting hold unless a rule said otherwise. */
enum pkt_tun_tx_key {
	PKT_TUN_TX_KEY = 1 << 0,    /* send with tunnel.vni and tunnel.dst_port */
	PKT_TUN_TX_CSUM = 1 << 1,   /* outer UDP checksum computed (`csum`) */
	PKT_TUN_TX_NOCSUM = 1 << 2, /* outer UDP checksum zero (`nocsum`) */
};

/* What decapsulation learnt from the outer headers (like OVS's md.tunnel);
 * on the way out, with tx_key, what encapsulation is to write. */
struct pkt_tunnel {
	uint32_t vni;          /* valid when `family` != 0 */
	uint8_t family;        /* 0 = not tunnelled, 4, 6 */
	uint8_t src[16];       /* outer source address (IPv4 in first 4 bytes) */
	uint8_t dst[16];
	uint16_t src_port;     /* outer UDP ports, host order */
	uint16_t dst_port;
	uint8_t tx_key;        /* enum pkt_tun_tx_key; 0 on receive */
	uint8_t tos, ttl;      /* outer IP TOS / traffic class and TTL / hop
	                        * limit, on receive (0 when not known) */
};

struct pkt;

struct pkt_frag {
	const uint8_t *data;
	uint32_t size;
	struct pkt *owner; /* holds a reference; may be NULL for static data */
};

struct pkt {
	uint8_t *base;
	uint8_t *data;
	uint32_t size;        /* bytes of the linear part */
	uint32_t frags_size;  /* sum of frags[].size */

	struct pkt_offload ol;

	uint16_t l2_ofs, l3_ofs, l4_ofs, payload_ofs;
	uint16_t tunnel_ofs;
	uint16_t inner_l2_ofs, inner_l3_ofs, inner_l4_ofs, inner_payload_ofs;

	uint16_t in_port;
	struct pkt_tunnel tunnel;

	uint16_t nr_frags;
	uint16_t refcnt;
	struct pkt_pool *pool;
	struct pkt *next; /* free list, batches, GRO chains: one user at a time */
	uint64_t timestamp_ns; /* set by the receiving port */

	struct pkt_frag frags[PKT_MAX_FRAGS];

	/* Bytes of the buffer at `base`: PKT_BUF_SIZE unless the pool was
	 * made by pkt_pool_create_sized() (0, in a pkt no pool made, means
	 * PKT_BUF_SIZE).  Last, away from the fields the data path reads. */
	uint32_t buf_size;
	/* Cache-line aligned (pools allocate them so): the fields up to
	 * in_port share the first line, the rest of the header the second. */
} __attribute__((aligned(64)));

struct pkt_pool_stats {
	uint64_t allocs;
	uint64_t alloc_failures;
	uint32_t in_use;
	uint32_t in_use_max;
};

struct pkt_pool;

/* Constructor/destructor.  A pool preallocates `count` pkts with buffers of
 * PKT_BUF_SIZE; pkt_alloc() never calls malloc.  Returns 0 with the pool in
 * *out, or -ENOMEM with *out = NULL.  pkt_pool_destroy(NULL) is a no-op. */
int pkt_pool_create(uint32_t count, struct pkt_pool **out);
/* A pool whose buffers hold `buf_size` bytes (headroom, frame and
 * tailroom; at least PKT_HEADROOM + PKT_TAILROOM, at most PKT_BUF_SIZE)
 * instead of PKT_BUF_SIZE: for frames known to be small, e.g. received
 * segments of at most an MTU.  Buffers are packed back to back in one
 * region that asks for transparent huge pages, so a burst touches few
 * pages and TLB entries.  Returns NULL with errno EINVAL or ENOMEM. */
struct pkt_pool *pkt_pool_create_sized(uint32_t count, uint32_t buf_size);
void pkt_pool_destroy(struct pkt_pool *pool);
void pkt_pool_get_stats(const struct pkt_pool *pool, struct pkt_pool_stats *out);

/* A fresh pkt: empty, headroom reserved, offsets absent, refcnt 1.
 * NULL when the pool is exhausted (counted in alloc_failures). */
struct pkt *pkt_alloc(struct pkt_pool *pool);
void pkt_ref(struct pkt *pkt);
/* Drops one reference; at zero releases frag owners and returns the pkt to
 * its pool.  pkt_free(NULL) is a no-op. */
void pkt_free(struct pkt *pkt);

/* Clears offsets, offload metadata, tunnel data and frags (releasing their
 * owners) and makes the frame empty with full headroom. */
void pkt_reset(struct pkt *pkt);
void pkt_clear_offsets(struct pkt *pkt);

static inline uint32_t pkt_headroom(const struct pkt *pkt)
{
	return (uint32_t)(pkt->data - pkt->base);
}

static inline uint32_t pkt_buf_size(const struct pkt *pkt)
{
	return pkt->buf_size ? pkt->buf_size : PKT_BUF_SIZE;
}

static inline uint32_t pkt_tailroom(const struct pkt *pkt)
{
	return pkt_buf_size(pkt) - pkt_headroom(pkt) - pkt->size;
}

/* Whole frame length: linear part and frags. */
static inline uint32_t pkt_len(const struct pkt *pkt)
{
	return pkt->size + pkt->frags_size;
}

/* Checked accessor: pointer to `len` linear bytes at `ofs`, or NULL. */
static inline const uint8_t *pkt_at(const struct pkt *pkt, uint32_t ofs, uint32_t len)
{
	if (ofs > pkt->size || len > pkt->size - ofs)
		return NULL;
	return pkt->data + ofs;
}

/* Prepend `len` bytes; returns the new start or NULL if headroom is short.
 * Offsets are shifted so they still point at the same headers. */
uint8_t *pkt_push(struct pkt *pkt, uint32_t len);
/* Remove `len` bytes from the front; NULL if the linear part is shorter.
 * Offsets that pointed before the new start become PKT_OFS_NONE. */
uint8_t *pkt_pull(struct pkt *pkt, uint32_t len);
/* Append `len` bytes to the linear part; NULL if tailroom is short. */
uint8_t *pkt_put(struct pkt *pkt, uint32_t len);
/* Copy `len` bytes in as the whole linear frame (after pkt_reset()). */
int pkt_set_data(struct pkt *pkt, const void *bytes, uint32_t len);
/* Shorten the frame to `len` bytes (drops frags past it).  No-op if longer. */
void pkt_trim(struct pkt *pkt, uint32_t len);

/* Append a payload piece; takes a reference on `owner` (may be NULL).
 * Returns -ENOSPC when all PKT_MAX_FRAGS are used. */
int pkt_add_frag(struct pkt *pkt, const uint8_t *data, uint32_t size, struct pkt *owner);

/* Copy `len` bytes of the frame starting at `ofs` (linear and frags) into
 * `dst`; returns -EINVAL if the range passes the end. */
int pkt_copy_out(const struct pkt *pkt, uint32_t ofs, uint32_t len, void *dst);

/* Move the frags into the linear part (one copy).  -ENOSPC if too big. */
int pkt_linearize(struct pkt *pkt);

/* A second frame with the same bytes, for one more output of a flood (a
 * local port, or a remote VTEP that gets it encapsulated), that shares the
 * payload instead of copying it: a 64 KB TSO frame is never copied per
 * output.  From `pool` (may be another pool than pkt's).
 *
 * What is copied, into the clone's own linear part: the headers, i.e. the
 * linear bytes before the innermost payload offset (inner_payload_ofs when
 * tunnelled, else payload_ofs), or the whole linear part when the frame has
 * no payload offset in its linear part (an unparsed frame, ARP).  Also
 * copied: every offset, the offload metadata (ol), in_port, tunnel and
 * timestamp_ns.  The clone starts with full headroom.
 *
 * What is shared: the payload.  The original's linear bytes past the
 * headers become the clone's first frag, owned by the original (which thus
 * stays allocated until the clone is freed); then the original's frags
 * follow, each taking one more reference on its owner.  (With all
 * PKT_MAX_FRAGS slots used by the original, the linear payload is copied
 * instead: at most one linear part.)
 *
 * What a writer may change, in either frame, once a clone exists:
 *   - its own linear part: rewrite header bytes, pkt_push/pkt_pull/pkt_put
 *     (e.g. encapsulate), fill a checksum field inside the headers;
 *   - its own frag array: pkt_trim, or pkt_linearize (which copies);
 *   - its own metadata (offsets, ol, tunnel ...).
 * Read-only for both: the bytes of every frag and, in the original, the
 * buffer bytes past the headers (the clone's first frag points at them):
 * while a clone lives, the original must not pkt_reset(), pkt_set_data(),
 * or pkt_trim() then pkt_put() over them; a frame to rebuild is freed and a
 * new one allocated.  The clone may be reset: its linear part is its own.
 *
 * Returns NULL, with the original unchanged, when the pool is empty
 * (counted in its alloc_failures) or the headers do not fit the pool's
 * buffers.  A frame's refcnt is 16 bits: at most 65534 clones at a time. */
struct pkt *pkt_clone(struct pkt_pool *pool, struct pkt *pkt);

#endif

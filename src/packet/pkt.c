#include "packet/pkt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct pkt_pool {
	struct pkt *free_list;
	struct pkt *pkts;
	uint8_t *buffers;
	uint32_t count;
	struct pkt_pool_stats stats;
};

enum { PKT_HUGE_PAGE = 2u << 20 };

/* `size` bytes aligned to a huge page, asking the kernel to back them
 * with huge pages (a hint: without THP they are plain pages). */
static void *pkt_alloc_huge(size_t size)
{
	size = size ? (size + PKT_HUGE_PAGE - 1) & ~(size_t)(PKT_HUGE_PAGE - 1) : PKT_HUGE_PAGE;
	void *mem = aligned_alloc(PKT_HUGE_PAGE, size);
	if (mem)
		(void)madvise(mem, size, MADV_HUGEPAGE);
	return mem;
}

static struct pkt_pool *pkt_pool_create_with(uint32_t count, uint32_t buf_size, bool huge)
{
	struct pkt_pool *pool = calloc(1, sizeof(*pool));
	if (!pool)
		return NULL;
	size_t pkts_size = (size_t)count * sizeof(*pool->pkts);
	if (huge)
		pool->pkts = pkt_alloc_huge(pkts_size);
	else
		pool->pkts = aligned_alloc(_Alignof(struct pkt), pkts_size ? pkts_size : sizeof(struct pkt));
	if (!pool->pkts)
		goto err_free_pool;
	memset(pool->pkts, 0, pkts_size);
	/* One allocation for all buffers; pages are touched only when used. */
	pool->buffers = huge ? pkt_alloc_huge((size_t)count * buf_size) : malloc((size_t)count * buf_size);
	if (!pool->buffers)
		goto err_free_pkts;
	pool->count = count;
	for (uint32_t i = count; i-- > 0;) {
		struct pkt *pkt = &pool->pkts[i];
		pkt->base = pool->buffers + (size_t)i * buf_size;
		pkt->buf_size = buf_size;
		pkt->pool = pool;
		pkt->next = pool->free_list;
		pool->free_list = pkt;
	}
	return pool;

err_free_pkts:
	free(pool->pkts);
err_free_pool:
	free(pool);
	return NULL;
}

int pkt_pool_create(uint32_t count, struct pkt_pool **out)
{
	*out = pkt_pool_create_with(count, PKT_BUF_SIZE, false);
	return *out ? 0 : -ENOMEM;
}

struct pkt_pool *pkt_pool_create_sized(uint32_t count, uint32_t buf_size)
{
	if (buf_size < PKT_HEADROOM + PKT_TAILROOM || buf_size > PKT_BUF_SIZE) {
		errno = EINVAL;
		return NULL;
	}
	/* Cache-line multiples: no two buffers share a line. */
	buf_size = (buf_size + 63) & ~63u;
	struct pkt_pool *pool = pkt_pool_create_with(count, buf_size, true);
	if (!pool)
		errno = ENOMEM;
	return pool;
}

void pkt_pool_destroy(struct pkt_pool *pool)
{
	if (!pool)
		return;
	free(pool->buffers);
	free(pool->pkts);
	free(pool);
}

void pkt_pool_get_stats(const struct pkt_pool *pool, struct pkt_pool_stats *out)
{
	*out = pool->stats;
}

void pkt_clear_offsets(struct pkt *pkt)
{
	pkt->l2_ofs = pkt->l3_ofs = pkt->l4_ofs = pkt->payload_ofs = PKT_OFS_NONE;
	pkt->tunnel_ofs = PKT_OFS_NONE;
	pkt->inner_l2_ofs = pkt->inner_l3_ofs = PKT_OFS_NONE;
	pkt->inner_l4_ofs = pkt->inner_payload_ofs = PKT_OFS_NONE;
}

static void pkt_release_frags(struct pkt *pkt)
{
	for (uint16_t i = 0; i < pkt->nr_frags; i++)
		pkt_free(pkt->frags[i].owner);
	pkt->nr_frags = 0;
	pkt->frags_size = 0;
}

void pkt_reset(struct pkt *pkt)
{
	pkt_release_frags(pkt);
	pkt->data = pkt->base + PKT_HEADROOM;
	pkt->size = 0;
	memset(&pkt->ol, 0, sizeof(pkt->ol));
	memset(&pkt->tunnel, 0, sizeof(pkt->tunnel));
	pkt_clear_offsets(pkt);
	pkt->in_port = 0;
	pkt->next = NULL;
	pkt->timestamp_ns = 0;
}

struct pkt *pkt_alloc(struct pkt_pool *pool)
{
	struct pkt *pkt = pool->free_list;
	if (!pkt) {
		pool->stats.alloc_failures++;
		return NULL;
	}
	pool->free_list = pkt->next;
	pool->stats.allocs++;
	if (++pool->stats.in_use > pool->stats.in_use_max)
		pool->stats.in_use_max = pool->stats.in_use;
	pkt->refcnt = 1;
	pkt->nr_frags = 0;
	pkt->frags_size = 0;
	pkt_reset(pkt);
	return pkt;
}

void pkt_ref(struct pkt *pkt)
{
	pkt->refcnt++;
}

void pkt_free(struct pkt *pkt)
{
	if (!pkt || --pkt->refcnt > 0)
		return;
	pkt_release_frags(pkt);
	struct pkt_pool *pool = pkt->pool;
	pkt->next = pool->free_list;
	pool->free_list = pkt;
	pool->stats.in_use--;
}

static void pkt_shift_offsets(struct pkt *pkt, int delta)
{
	uint16_t *ofs[] = {
		&pkt->l2_ofs, &pkt->l3_ofs, &pkt->l4_ofs, &pkt->payload_ofs,
		&pkt->tunnel_ofs, &pkt->inner_l2_ofs, &pkt->inner_l3_ofs,
		&pkt->inner_l4_ofs, &pkt->inner_payload_ofs,
	};
	for (size_t i = 0; i < sizeof(ofs) / sizeof(ofs[0]); i++) {
		if (*ofs[i] == PKT_OFS_NONE)
			continue;
		int moved = (int)*ofs[i] + delta;
		*ofs[i] = (moved < 0 || moved >= PKT_OFS_NONE) ? PKT_OFS_NONE : (uint16_t)moved;
	}
}

uint8_t *pkt_push(struct pkt *pkt, uint32_t len)
{
	if (len > pkt_headroom(pkt))
		return NULL;
	pkt->data -= len;
	pkt->size += len;
	pkt_shift_offsets(pkt, (int)len);
	return pkt->data;
}

uint8_t *pkt_pull(struct pkt *pkt, uint32_t len)
{
	if (len > pkt->size)
		return NULL;
	pkt->data += len;
	pkt->size -= len;
	pkt_shift_offsets(pkt, -(int)len);
	return pkt->data;
}

uint8_t *pkt_put(struct pkt *pkt, uint32_t len)
{
	if (len > pkt_tailroom(pkt))
		return NULL;
	uint8_t *tail = pkt->data + pkt->size;
	pkt->size += len;
	return tail;
}

int pkt_set_data(struct pkt *pkt, const void *bytes, uint32_t len)
{
	pkt_reset(pkt);
	uint8_t *dst = pkt_put(pkt, len);
	if (!dst)
		return -ENOSPC;
	memcpy(dst, bytes, len);
	return 0;
}

void pkt_trim(struct pkt *pkt, uint32_t len)
{
	if (len >= pkt_len(pkt))
		return;
	if (len <= pkt->size) {
		pkt_release_frags(pkt);
		pkt->size = len;
		return;
	}
	uint32_t left = len - pkt->size;
	uint16_t keep = 0;
	pkt->frags_size = 0;
	for (uint16_t i = 0; i < pkt->nr_frags; i++) {
		struct pkt_frag *frag = &pkt->frags[i];
		if (left == 0) {
			pkt_free(frag->owner);
			continue;
		}
		if (frag->size > left)
			frag->size = left;
		left -= frag->size;
		pkt->frags_size += frag->size;
		keep = (uint16_t)(i + 1);
	}
	pkt->nr_frags = keep;
}

int pkt_add_frag(struct pkt *pkt, const uint8_t *data, uint32_t size, struct pkt *owner)
{
	if (pkt->nr_frags >= PKT_MAX_FRAGS)
		return -ENOSPC;
	if (owner)
		pkt_ref(owner);
	pkt->frags[pkt->nr_frags++] = (struct pkt_frag){ data, size, owner };
	pkt->frags_size += size;
	return 0;
}

int pkt_copy_out(const struct pkt *pkt, uint32_t ofs, uint32_t len, void *dst)
{
	uint8_t *out = dst;
	if (ofs > pkt_len(pkt) || len > pkt_len(pkt) - ofs)
		return -EINVAL;
	if (ofs < pkt->size) {
		uint32_t n = pkt->size - ofs < len ? pkt->size - ofs : len;
		memcpy(out, pkt->data + ofs, n);
		out += n;
		len -= n;
		ofs = 0;
	} else {
		ofs -= pkt->size;
	}
	for (uint16_t i = 0; i < pkt->nr_frags && len > 0; i++) {
		const struct pkt_frag *frag = &pkt->frags[i];
		if (ofs >= frag->size) {
			ofs -= frag->size;
			continue;
		}
		uint32_t n = frag->size - ofs < len ? frag->size - ofs : len;
		memcpy(out, frag->data + ofs, n);
		out += n;
		len -= n;
		ofs = 0;
	}
	return 0;
}

int pkt_linearize(struct pkt *pkt)
{
	if (pkt->nr_frags == 0)
		return 0;
	if (pkt->frags_size > pkt_tailroom(pkt))
		return -ENOSPC;
	uint8_t *tail = pkt->data + pkt->size;
	for (uint16_t i = 0; i < pkt->nr_frags; i++) {
		memcpy(tail, pkt->frags[i].data, pkt->frags[i].size);
		tail += pkt->frags[i].size;
	}
	pkt->size += pkt->frags_size;
	pkt_release_frags(pkt);
	return 0;
}

/* Where the headers a clone may rewrite end: the innermost payload offset
 * the parse left (inner when tunnelled, as parse/'s pkt_innermost_payload(),
 * which packet/ must not include), or the whole linear part when there is
 * none or it lies in the frags. */
static uint32_t pkt_clone_hdr_len(const struct pkt *pkt)
{
	uint16_t payload = pkt->tunnel_ofs != PKT_OFS_NONE ? pkt->inner_payload_ofs : pkt->payload_ofs;
	return payload == PKT_OFS_NONE || payload > pkt->size ? pkt->size : payload;
}

static void pkt_clone_meta(struct pkt *clone, const struct pkt *pkt)
{
	clone->ol = pkt->ol;
	clone->l2_ofs = pkt->l2_ofs;
	clone->l3_ofs = pkt->l3_ofs;
	clone->l4_ofs = pkt->l4_ofs;
	clone->payload_ofs = pkt->payload_ofs;
	clone->tunnel_ofs = pkt->tunnel_ofs;
	clone->inner_l2_ofs = pkt->inner_l2_ofs;
	clone->inner_l3_ofs = pkt->inner_l3_ofs;
	clone->inner_l4_ofs = pkt->inner_l4_ofs;
	clone->inner_payload_ofs = pkt->inner_payload_ofs;
	clone->in_port = pkt->in_port;
	clone->tunnel = pkt->tunnel;
	clone->timestamp_ns = pkt->timestamp_ns;
}

struct pkt *pkt_clone(struct pkt_pool *pool, struct pkt *pkt)
{
	uint32_t hdr_len = pkt_clone_hdr_len(pkt);
	uint32_t tail = pkt->size - hdr_len;
	/* The linear payload becomes the clone's first frag; with every frag
	 * slot taken it is copied instead (bounded by one linear part). */
	uint32_t copy = tail && pkt->nr_frags >= PKT_MAX_FRAGS ? pkt->size : hdr_len;

	struct pkt *clone = pkt_alloc(pool);
	if (!clone)
		return NULL;
	uint8_t *dst = pkt_put(clone, copy);
	if (!dst) {
		pkt_free(clone);
		return NULL;
	}
	memcpy(dst, pkt->data, copy);
	if (copy < pkt->size)
		(void)pkt_add_frag(clone, pkt->data + copy, pkt->size - copy, pkt);
	for (uint16_t i = 0; i < pkt->nr_frags; i++) {
		const struct pkt_frag *frag = &pkt->frags[i];
		(void)pkt_add_frag(clone, frag->data, frag->size, frag->owner);
	}
	pkt_clone_meta(clone, pkt);
	return clone;
}

/* The switch's hash functions, one copy each, all seeded by the caller.
 *
 * Who uses what:
 *   hash_murmur3_*   32-bit murmur3 (block step, bytes, finaliser): the
 *                    VXLAN source port (offload/vxlan_encap.c, whose value
 *                    peers see on the wire: do not change it) and the
 *                    classifier's subtable and mask hashes (switch/classifier.c);
 *   hash_mix64()     splitmix64's finaliser: the FDB's MAC and VNI hashes
 *                    (switch/fdb_table.c), seeded with a secret so that
 *                    colliding MACs cannot be computed offline;
 *   hash_words64()   multiply-xorshift steps over 64-bit words: the flow
 *                    cache's key hash (switch/flow_cache.c), a hash of a key
 *                    we parsed where a collision costs a miss, never a
 *                    wrong verdict.
 * Kept apart on purpose: GRO's bucket hash (offload/gro_tcp.c, one
 * multiply over the addresses and ports; equality is decided by comparing
 * the headers) and the tap/socket lane hash (port/flow_lane.h), which must
 * give the same value in C, classic BPF and eBPF.
 *
 * None is cryptographic.  Pure functions, inline: every caller runs them
 * per packet or per lookup. */
#ifndef VX_UTIL_HASH_H
#define VX_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t hash_rotl32(uint32_t x, int r)
{
	return (x << r) | (x >> (32 - r));
}

/* murmur3's 32-bit block step: h is the running hash (start with a seed). */
static inline uint32_t hash_murmur3_add(uint32_t h, uint32_t word)
{
	word *= 0xcc9e2d51u;
	word = hash_rotl32(word, 15);
	word *= 0x1b873593u;
	h ^= word;
	return hash_rotl32(h, 13) * 5 + 0xe6546b64u;
}

/* `len` bytes in 4-byte native-order blocks, the tail zero-padded. */
static inline uint32_t hash_murmur3_bytes(uint32_t h, const uint8_t *bytes, size_t len)
{
	size_t i = 0;
	uint32_t w;

	for (; i + 4 <= len; i += 4) {
		memcpy(&w, bytes + i, 4);
		h = hash_murmur3_add(h, w);
	}
	if (i < len) {
		w = 0;
		memcpy(&w, bytes + i, len - i);
		h = hash_murmur3_add(h, w);
	}
	return h;
}

/* murmur3's finaliser (fmix32). */
static inline uint32_t hash_murmur3_finish(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	return h ^ (h >> 16);
}

/* splitmix64's finaliser: every input bit flips about half the output
 * bits.  Seed by xoring the seed into x. */
static inline uint64_t hash_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* n native-order 64-bit words at `p` (any alignment, any type) then one
 * 32-bit tail word, from `seed`. */
static inline uint32_t hash_words64(uint64_t seed, const void *p, size_t n, uint32_t tail)
{
	uint64_t h = seed, w;

	for (size_t i = 0; i < n; i++) {
		memcpy(&w, (const uint8_t *)p + 8 * i, 8);
		h ^= w;
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	h ^= tail;
	h *= 0xc4ceb9fe1a85ec53ull;
	return (uint32_t)(h ^ (h >> 29));
}

#endif

/* The bounded GRO table (see gro.h, "Bounds" and "Flushing"): construction,
 * the hash buckets, completing a run (emitting it merged or alone) and
 * flushing, stats and names.  Like the kernel's net/core/gro.c around
 * napi_gro_flush() and gro_flush_oldest(). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "offload/gro_internal.h"

static const char *const gro_flush_names[] = {
#define GRO_FLUSH_NAME(name, str) str,
	GRO_FLUSH_REASONS(GRO_FLUSH_NAME)
#undef GRO_FLUSH_NAME
};

static const char *const gro_pass_names[] = {
#define GRO_PASS_NAME(name, str) str,
	GRO_PASS_REASONS(GRO_PASS_NAME)
#undef GRO_PASS_NAME
};

const char *gro_flush_reason_name(enum gro_flush_reason reason)
{
	if ((unsigned)reason >= GRO_FLUSH_REASON_COUNT)
		return "invalid";
	return gro_flush_names[reason];
}

const char *gro_pass_reason_name(enum gro_pass_reason reason)
{
	if ((unsigned)reason >= GRO_PASS_REASON_COUNT)
		return "invalid";
	return gro_pass_names[reason];
}

int gro_create(const struct gro_config *config, struct gro_table **out)
{
	*out = NULL;
	uint32_t max_flows = config->max_flows ? config->max_flows : GRO_DEFAULT_MAX_FLOWS;
	uint32_t max_size = config->max_size ? config->max_size : GRO_DEFAULT_MAX_SIZE;

	if (!config->emit || max_size > GRO_DEFAULT_MAX_SIZE || max_flows > GRO_MAX_FLOWS)
		return -EINVAL;
	uint32_t slots = max_flows < GRO_BUCKET_SLOTS ? max_flows : GRO_BUCKET_SLOTS;
	uint32_t buckets = 1;
	while (buckets * 2 * slots <= max_flows)
		buckets *= 2;

	struct gro_table *table = calloc(1, sizeof(*table) + (size_t)buckets * slots * sizeof(struct gro_flow));
	if (!table)
		return -ENOMEM;
	table->buckets = calloc(buckets, sizeof(*table->buckets));
	table->keys = malloc((size_t)buckets * slots * sizeof(*table->keys));
	if (!table->buckets || !table->keys) {
		gro_destroy(table);
		return -ENOMEM;
	}
	table->emit = config->emit;
	table->emit_aux = config->emit_aux;
	table->hold_ns = config->hold_ns;
	table->max_size = max_size;
	table->bucket_slots = slots;
	table->n_buckets = buckets;
	table->n_flows = buckets * slots;
#if defined(__x86_64__)
	table->avx2 = __builtin_cpu_supports("avx2");
#endif
	*out = table;
	return 0;
}

void gro_destroy(struct gro_table *table)
{
	if (!table)
		return;
	for (uint32_t i = 0; i < table->n_flows; i++)
		pkt_free(table->flows[i].head.pkt);
	free(table->buckets);
	free(table->keys);
	free(table);
}

void gro_stats_add(struct gro_stats *st, const struct gro_stats *b)
{
	st->segments_in += b->segments_in;
	st->frames_out += b->frames_out;
	st->merged_frames += b->merged_frames;
	st->merged_segments += b->merged_segments;
	st->bytes_out += b->bytes_out;
	for (unsigned i = 0; i < GRO_SIZE_BUCKETS; i++)
		st->segs_per_frame[i] += b->segs_per_frame[i];
	for (unsigned i = 0; i < GRO_FLUSH_REASON_COUNT; i++)
		st->flushes[i] += b->flushes[i];
	for (unsigned i = 0; i < GRO_PASS_REASON_COUNT; i++)
		st->passthrough[i] += b->passthrough[i];
	st->flows_held += b->flows_held;
}

void gro_get_stats(const struct gro_table *table, struct gro_stats *out)
{
	*out = table->stats;
}

static uint32_t gro_bucket_index(const struct gro_table *table, uint32_t hash)
{
	return (uint32_t)(((uint64_t)hash * table->n_buckets) >> 32);
}

struct gro_flow *gro_lookup(struct gro_table *table, const struct gro_seg *seg)
{
	uint32_t b = gro_bucket_index(table, seg->hash);
	const struct gro_bucket *bucket = &table->buckets[b];

	for (unsigned used = bucket->used; used; used &= used - 1) {
		unsigned i = (unsigned)__builtin_ctz(used);
		struct gro_flow *flow = &table->flows[b * table->bucket_slots + i];
		if (bucket->hash[i] == seg->hash && gro_same_flow(&flow->head, seg))
			return flow;
	}
	return NULL;
}

/* A free slot in the segment's bucket, completing the oldest run there if
 * the bucket is full (gro_flush_oldest). */
struct gro_flow *gro_slot_for(struct gro_table *table, const struct gro_seg *seg)
{
	uint32_t b = gro_bucket_index(table, seg->hash);
	struct gro_bucket *bucket = &table->buckets[b];
	struct gro_flow *flows = &table->flows[b * table->bucket_slots];
	unsigned all = (1u << table->bucket_slots) - 1;
	unsigned free_slots = ~(unsigned)bucket->used & all;
	struct gro_flow *flow;

	if (free_slots) {
		flow = &flows[__builtin_ctz(free_slots)];
	} else {
		flow = &flows[0];
		for (uint32_t i = 1; i < table->bucket_slots; i++)
			if (flows[i].age < flow->age)
				flow = &flows[i];
		gro_complete(table, flow, GRO_FLUSH_TABLE_FULL);
	}
	flow->bucket = (uint16_t)b;
	flow->slot = (uint8_t)(flow - flows);
	bucket->hash[flow->slot] = seg->hash;
	bucket->used |= (uint8_t)(1u << flow->slot);
	return flow;
}

static void gro_emit(struct gro_table *table, struct pkt *pkt, const struct flow_key *key, uint32_t nr_segs)
{
	/* [k] holds 2^k .. 2^(k+1) - 1 segments (nr_segs >= 1). */
	unsigned bucket = 31u - (unsigned)__builtin_clz(nr_segs);

	if (bucket >= GRO_SIZE_BUCKETS)
		bucket = GRO_SIZE_BUCKETS - 1;
	table->stats.segs_per_frame[bucket]++;
	table->stats.frames_out++;
	table->stats.bytes_out += pkt_len(pkt);
	if (nr_segs > 1) {
		table->stats.merged_frames++;
		table->stats.merged_segments += nr_segs;
	}
	table->emit(table->emit_aux, pkt, key);
}

void gro_pass(struct gro_table *table, struct pkt *pkt, const struct flow_key *key, enum gro_pass_reason why)
{
	table->stats.passthrough[why]++;
	gro_decap_passthrough(pkt);
	gro_emit(table, pkt, key, 1);
}

/* The key a completing run leaves with: the head's, with the FIN/PSH merged
 * into its header; that one is written in the slot's own copy, which stays
 * valid during the emit call as gro.h promises. */
static const struct flow_key *gro_emit_key(struct gro_table *table, struct gro_flow *flow)
{
	const struct flow_key *key = flow->key;

	if (!key || !(flow->merged_flags & ~key->tcp_flags))
		return key;
	struct flow_key *own = &table->keys[flow - table->flows];
	if (own != key)
		*own = *key;
	own->tcp_flags |= flow->merged_flags;
	return own;
}

void gro_keys_settle(struct gro_table *table, uint64_t age0)
{
	if (table->next_age == age0)
		return; /* no run started */
	for (uint32_t b = 0; b < table->n_buckets && table->stats.flows_held; b++) {
		for (unsigned used = table->buckets[b].used; used; used &= used - 1) {
			uint32_t i = b * table->bucket_slots + (unsigned)__builtin_ctz(used);
			struct gro_flow *flow = &table->flows[i];
			if (flow->age >= age0 && flow->key && flow->key != &table->keys[i]) {
				table->keys[i] = *flow->key;
				flow->key = &table->keys[i];
			}
		}
	}
}

/* A run of one leaves as it came, its checksum now known good; a merged run
 * gets the merged frame's headers and offload metadata. */
void gro_complete(struct gro_table *table, struct gro_flow *flow, enum gro_flush_reason why)
{
	struct gro_seg *head = &flow->head;
	struct pkt *pkt = head->pkt;
	uint16_t count = flow->count;
	const struct flow_key *key = gro_emit_key(table, flow);

	table->stats.flushes[why]++;
	table->stats.flows_held--;
	table->buckets[flow->bucket].used &= (uint8_t)~(1u << flow->slot);
	head->pkt = NULL;

	if (count == 1) {
		table->stats.passthrough[GRO_PASS_FLUSHED_ALONE]++;
		pkt->ol.flags |= PKT_OL_DATA_VALID;
		gro_decap_passthrough(pkt);
		gro_emit(table, pkt, key, 1);
		return;
	}

	gro_decap_passthrough(pkt);
	gro_tcp_finish_merged(flow, pkt);
	gro_emit(table, pkt, key, count);
}

void gro_flush(struct gro_table *table, enum gro_flush_scope scope, uint64_t now_ns)
{
	for (uint32_t b = 0; b < table->n_buckets && table->stats.flows_held; b++) {
		for (unsigned used = table->buckets[b].used; used; used &= used - 1) {
			struct gro_flow *flow = &table->flows[b * table->bucket_slots + (unsigned)__builtin_ctz(used)];
			if (scope == GRO_FLUSH_ALL)
				gro_complete(table, flow, GRO_FLUSH_BATCH_END);
			else if (gro_run_expired(flow, now_ns))
				gro_complete(table, flow, GRO_FLUSH_TIMEOUT);
		}
	}
}

uint64_t gro_next_expiry_ns(const struct gro_table *table)
{
	uint64_t deadline = UINT64_MAX;

	for (uint32_t i = 0; i < table->n_flows && table->stats.flows_held; i++) {
		const struct gro_flow *flow = &table->flows[i];
		if (flow->head.pkt && flow->deadline_ns < deadline)
			deadline = flow->deadline_ns;
	}
	return deadline;
}

/* Capture on the kernel datapath, the loader's side (the programs' side:
 * bpf/vxdp_capture.h; the layout: bpf/vxdp_capture_abi.h).
 *
 * kdp_cap_set() switches the copy of one port's frames on or off per
 * direction (map `cap_ports`) and keeps the programs' `vxdp_cap_on` equal
 * to the number of keys switched on, so a datapath with no capture pays
 * one test per frame.  A key may carry a pre-filter (bpf/vxdp_cbpf.h): a
 * frame it rejects is counted (`filtered`), not copied.  A reader (perf_buffer over `cap_ring`, one buffer
 * per CPU) hands each copied frame to a callback; its epoll fd turns
 * readable when copies wait.  Capturing changes nothing in what the
 * programs decide: the port stays on the fast path.
 *
 * Who calls it: vxswitchd's control thread (control/kdp_capture.c) and
 * the unit tests; one thread.  Functions return 0 or a negative errno. */
#ifndef VXSWITCH_DP_KERNEL_KDP_CAPTURE_H
#define VXSWITCH_DP_KERNEL_KDP_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "dp/kernel/bpf/vxdp_capture_abi.h"

struct kdp;
struct kdp_cap_reader;

/* dirs: VXDP_CAP_IN | VXDP_CAP_OUT, 0 to switch the key off.  filter,
 * n_insns: the key's pre-filter (classic BPF; n_insns 0: copy every
 * frame), which kdp_cbpf_check() must pass (else -EINVAL or -E2BIG and
 * nothing changed); it replaces the key's previous one. */
int kdp_cap_set(struct kdp *k, const struct vxdp_cap_key *key, uint32_t dirs, const struct vxdp_cbpf_insn *filter,
		size_t n_insns);
/* The key's state (its captured / dropped counts); -ENOENT when off. */
int kdp_cap_state(struct kdp *k, const struct vxdp_cap_key *key, struct vxdp_cap_state *st);
/* Switches every key off: what a killed run left in a kept (pinned)
 * `cap_ports` map must not be copied for nobody. */
int kdp_cap_clear(struct kdp *k);
/* Over every key on: how many carry a pre-filter, and the frames their
 * pre-filters kept from the ring. */
int kdp_cap_totals(struct kdp *k, uint32_t *prefiltered, uint64_t *filtered);
/* The programs' flag as it is now (tests). */
int kdp_cap_on(struct kdp *k, uint32_t *on);

/* One copied frame: meta->caplen bytes at `frame`. */
typedef void kdp_cap_fn(void *aux, const struct vxdp_cap_meta *meta, const uint8_t *frame);

/* pages_per_cpu: a power of two (0: 1024, 4 MB per CPU, as a userspace
 * capture ring; only while a capture runs). */
int kdp_cap_reader_open(struct kdp *k, unsigned pages_per_cpu, kdp_cap_fn *fn, void *aux,
			struct kdp_cap_reader **out);
void kdp_cap_reader_close(struct kdp_cap_reader *r);
int kdp_cap_reader_fd(const struct kdp_cap_reader *r);
/* Hands waiting copies to the callback (timeout_ms 0: never waits);
 * returns how many or -errno. */
int kdp_cap_reader_poll(struct kdp_cap_reader *r, int timeout_ms);
/* Samples the kernel reported lost (PERF_RECORD_LOST), and samples too
 * short to hold their metadata. */
uint64_t kdp_cap_reader_lost(const struct kdp_cap_reader *r);

#endif

/* gro_diff: differential test of our GRO (src/offload/gro.c) against the
 * running Linux kernel's GRO, on the same TCP segment sequences.
 *
 *   gro_diff [-r REPEATS] [-c CASE] [-x] [-l] [-v]
 *
 * Run as root inside a fresh network namespace (tests/netns/
 * test_gro_vs_kernel.sh does that).  For each case the same frames go
 *
 *   - to the kernel: written one by one into a TAP opened with IFF_NAPI,
 *     so they pass through napi_gro_receive() of the tap's NAPI; an
 *     AF_PACKET socket with PACKET_VNET_HDR on the tap reads what GRO made
 *     of them (frame length = boundaries, virtio_net_hdr = gso_size/type);
 *   - to ours: flow_extract() + gro_receive_batch() as one batch.
 *
 * and per flow the sequence of output frames (first seq, length, gso_size,
 * gso_type) must be equal.  With -x the cases marked for it run again with
 * every frame in VXLAN to the tap's address, where a vxlan device listens
 * (the kernel's udp_gro_receive -> vxlan_gro_receive path); lengths are
 * then compared on the inner frame, which is what ours emits.
 *
 * Where the kernel legitimately differs, the case says so (gd_case.note):
 * CMP_ANY_ORDER cases compare the same frames in any order, CMP_REPORT
 * cases (kernel version-specific, hash-specific, or a documented limit of
 * ours) print both sides and check ours against its own documented rules.
 *
 * Making the kernel see one burst
 * ===============================
 *
 * A write to an IFF_NAPI tap queues the skb and schedules the NAPI, which
 * runs at the write's local_bh_enable(): one poll per write, and a plain
 * poll ends with napi_complete_done() flushing GRO, so nothing would ever
 * merge.  With a non-zero gro_flush_timeout, napi_complete_done() only
 * flushes runs whose first segment arrived in an earlier jiffy (flush_old)
 * and arms a repoll timer that flushes the rest when it fires
 * (net/core/dev.c, 6.x).  So with gro_flush_timeout = FLUSH_TIMEOUT_NS the
 * writes of one case behave as one NAPI batch, provided no jiffy tick falls
 * inside the burst.  That is checked, not hoped for: CLOCK_MONOTONIC_COARSE
 * advances on the same tick as jiffies, so it is read before the first
 * write and after the last one, and a burst during which it moved is
 * retried (counted as "retried" in the output).  The timer (20 ms) is
 * longer than any jiffy, so it cannot fire inside an accepted burst.
 *
 * Each case runs REPEATS times (default 2) on the kernel; every accepted run
 * must give the same frames, else the case is reported as nondeterministic
 * (a failure: the comparison would mean nothing).
 *
 * Exit status: 0 all compared cases agree (or differ only where a case
 * says the kernel's behaviour is version- or hash-specific, or ours has a
 * documented limitation), 1 a mismatch or unstable kernel output, 2 a setup
 * failure, 77 this kernel cannot run the test (no IFF_NAPI, or the kernel
 * did not merge a plain in-order burst: the method above does not hold). */
#include "grodiff/gro_diff.h"

bool gd_verbose;

/* ---- driver ----------------------------------------------------------- */

struct totals {
	unsigned compared, agreed, mismatched, excused, unstable, skipped, retried;
};

static int run_case(struct kernel_rig *k, const struct gd_case *gc, uint8_t family,
		    const struct fb_vxlan *vx, unsigned repeats, struct totals *t)
{
	static struct seg_list segs;
	static struct wire wire;
	static struct result ours, kern, first;
	char label[64];

	snprintf(label, sizeof(label), "%s_%sv%u", gc->name, vx ? "vxlan_" : "", family);
	memset(&segs, 0, sizeof(segs));
	if (vx)
		seg_list_set_outer(&segs, vx);
	struct case_ctx ctx = { .l = &segs, .family = family, .dst_mac = k->mac };
	gc->build(&ctx);
	if (build_wire(&segs, vx != NULL, &wire) != 0) {
		printf("%-26s SKIP (frame builder refused a segment)\n", label);
		t->skipped++;
		return 0;
	}
	uint32_t seq_base = segs.f[0].seq;
	for (unsigned i = 1; i < segs.n; i++)
		if (segs.f[i].seq < seq_base && segs.f[i].src_port == segs.f[0].src_port)
			seq_base = segs.f[i].seq;
	int err = run_ours(&wire, &ours);
	if (err) {
		printf("%-26s FAIL (our side could not run: %s)\n", label,
		       err == -EINVAL ? "flow_extract refused a frame" : strerror(-err));
		t->mismatched++;
		return 1;
	}
	result_sort(&ours);

	/* The kernel's frames depend on where its NAPI polls fall: on a busy
	 * machine a burst now and then is split across two polls without a
	 * jiffy tick to tell.  Such a round of bursts disagrees with itself;
	 * it is measured again (up to UNSTABLE_ROUNDS), and only a kernel that
	 * stays inconsistent is reported UNSTABLE. */
	unsigned accepted = 0, attempts = 0, ticks = 0, lost = 0, rounds = 0;
	bool stable = false;
	while (!stable && rounds < UNSTABLE_ROUNDS) {
		rounds++;
		stable = true;
		accepted = 0;
		while (accepted < repeats && attempts < MAX_ATTEMPTS * rounds) {
			attempts++;
			enum burst_status st = run_kernel_once(k, &wire, &kern);
			if (st == BURST_TICK) {
				ticks++;
				continue;
			}
			if (st == BURST_LOST) {
				lost++;
				continue;
			}
			result_sort(&kern);
			if (accepted == 0)
				first = kern;
			else if (!result_equal(&first, &kern))
				stable = false;
			accepted++;
		}
		if (accepted == 0)
			break;
	}
	if (rounds > 1)
		t->retried += rounds - 1; /* counted as retried bursts' rounds */
	t->retried += ticks + lost;
	if (accepted == 0) {
		printf("%-26s SKIP (no clean kernel burst in %u attempts: %u crossed a tick, %u lost frames)\n",
		       label, attempts, ticks, lost);
		t->skipped++;
		return 0;
	}
	t->compared++;
	if (!stable) {
		printf("%-26s UNSTABLE (kernel gave different frames on repeated clean bursts)\n", label);
		result_print("kernel", &first, seq_base);
		result_print("kernel", &kern, seq_base);
		t->unstable++;
		return 1;
	}
	bool same = result_equal(&first, &ours);
	const char *verdict = same ? "OK" : "MISMATCH";
	if (!same && gc->compare == CMP_ANY_ORDER) {
		struct result k2 = first, o2 = ours;
		result_sort_seq(&k2);
		result_sort_seq(&o2);
		same = result_equal(&k2, &o2);
		verdict = same ? "OK-ORDER" : "MISMATCH";
	}
	char shape[3 * MAX_OUT + 1];
	result_shape(&ours, shape, sizeof(shape));
	bool ours_as_documented = !gc->ours_expect || strcmp(shape, gc->ours_expect) == 0;
	if (!same && gc->compare == CMP_REPORT)
		verdict = ours_as_documented ? "DIFF-OK" : "MISMATCH";
	printf("%-26s %-8s  %2u segs -> kernel %2u frames, ours %2u frames (%u clean bursts, %u retried)\n",
	       label, verdict, segs.n, first.n, ours.n, accepted, ticks + lost);
	if ((!same || gd_verbose || strcmp(verdict, "OK") != 0) && gc->note)
		printf("    note: %s\n", gc->note);
	if (!same || gd_verbose) {
		result_print("kernel", &first, seq_base);
		result_print("ours", &ours, seq_base);
	}
	if (same) {
		t->agreed++;
		return 0;
	}
	if (gc->compare == CMP_REPORT && ours_as_documented) {
		t->excused++;
		return 0;
	}
	if (!ours_as_documented)
		printf("    ours gives segments per frame %s, its documented rules give %s\n", shape,
		       gc->ours_expect);
	t->mismatched++;
	return 1;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: gro_diff [-r REPEATS] [-c CASE] [-x] [-l] [-v]\n"
		     "  -r N     clean kernel bursts per case that must agree (default 2)\n"
		     "  -c NAME  only cases whose name starts with NAME\n"
		     "  -x       also the VXLAN cases (needs a vxlan device on port 4789 here)\n"
		     "  -l       list the cases\n"
		     "  -v       print the frames of every case, not only mismatches\n");
}

int main(int argc, char **argv)
{
	unsigned repeats = 2;
	const char *only = NULL;
	bool with_vxlan = false;
	int opt;

	while ((opt = getopt(argc, argv, "r:c:xlvh")) != -1) {
		switch (opt) {
		case 'r':
			repeats = (unsigned)strtoul(optarg, NULL, 10);
			if (repeats == 0 || repeats > MAX_ATTEMPTS)
				repeats = 2;
			break;
		case 'c':
			only = optarg;
			break;
		case 'x':
			with_vxlan = true;
			break;
		case 'l':
			for (size_t i = 0; i < gd_n_cases; i++)
				printf("%s%s%s%s\n", gd_cases[i].name, gd_cases[i].families & F4 ? " v4" : "",
				       gd_cases[i].families & F6 ? " v6" : "",
				       gd_cases[i].families & VXO ? " (vxlan only)" :
				       gd_cases[i].families & FVX ? " vxlan" : "");
			return 0;
		case 'v':
			gd_verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}

	/* One CPU: the tap's NAPI runs where the writes happen. */
	cpu_set_t cpus;
	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &cpus);
	(void)sched_setaffinity(0, sizeof(cpus), &cpus);

	static struct kernel_rig rig;
	int err = rig_open(&rig);
	if (err == -EOPNOTSUPP)
		return 77;
	if (err)
		return 2;
	if (!kernel_merges(&rig, NULL)) {
		fprintf(stderr, "gro_diff: the kernel did not merge an in-order burst on %s: "
				"IFF_NAPI + gro_flush_timeout does not batch on this kernel\n", TAP_NAME);
		rig_close(&rig);
		return 77;
	}

	struct totals t = { 0 };
	int failed = 0;
	for (size_t i = 0; i < gd_n_cases; i++) {
		if ((only && strncmp(gd_cases[i].name, only, strlen(only)) != 0) || (gd_cases[i].families & VXO))
			continue;
		if (gd_cases[i].families & F4)
			failed |= run_case(&rig, &gd_cases[i], 4, NULL, repeats, &t);
		if (gd_cases[i].families & F6)
			failed |= run_case(&rig, &gd_cases[i], 6, NULL, repeats, &t);
	}

	/* VXLAN: the kernel's path is udp_gro_receive -> vxlan_gro_receive ->
	 * inner eth/IP/TCP, so the outer headers take part in same_flow and
	 * in the size cap. */
	struct fb_vxlan vx;
	vxlan_outer(&vx, rig.mac);
	if (with_vxlan && !kernel_merges(&rig, &vx)) {
		printf("VXLAN cases SKIPPED: the kernel did not merge an in-order VXLAN burst "
		       "(no vxlan device on UDP port 4789 in this namespace?)\n");
		with_vxlan = false;
		for (size_t i = 0; i < gd_n_cases; i++)
			if (gd_cases[i].families & (FVX | VXO))
				t.skipped += !!(gd_cases[i].families & F4) + !!(gd_cases[i].families & F6);
	}
	for (size_t i = 0; with_vxlan && i < gd_n_cases; i++) {
		if (!(gd_cases[i].families & (FVX | VXO)) ||
		    (only && strncmp(gd_cases[i].name, only, strlen(only)) != 0))
			continue;
		if (gd_cases[i].families & F4)
			failed |= run_case(&rig, &gd_cases[i], 4, &vx, repeats, &t);
		if (gd_cases[i].families & F6)
			failed |= run_case(&rig, &gd_cases[i], 6, &vx, repeats, &t);
	}
	rig_close(&rig);

	printf("gro_diff: %u cases compared: %u agree, %u mismatch, %u known differences "
	       "(not failures: kernel version/hash-specific or a documented limit of ours), "
	       "%u unstable; %u skipped; "
	       "%u kernel bursts retried (tick inside the burst or frames lost)\n",
	       t.compared, t.agreed, t.mismatched, t.excused, t.unstable, t.skipped, t.retried);
	if (t.compared == 0)
		return 2;
	return failed ? 1 : 0;
}

#!/usr/bin/python3
"""Where the CPU goes, per KB moved, for datapaths profiled in one run.

vxbench profile (profile.sh) records `perf record -a -g` over the middle
of one iperf3 transfer per datapath and writes, per datapath, the samples
as `perf script -F comm,ip,sym` text and a line of figures.  This folds
each into CPU microseconds per KB transferred (vxbench compare's unit),
by kind of work and by function, and prints them beside the first
datapath's (the reference, normally `kernel`) with the difference.

Attribution.  A sample is charged to its leaf function, with one
exception.  In a paravirtual guest (this machine's kernel is one) the
sampling interrupt cannot land while interrupts are masked: it is taken
when they are enabled again, so the sample shows the irq-enable function
(pvm_irq_enable, _raw_spin_unlock_irqrestore, ...) instead of the work
done with them masked.  Such a sample goes to the first caller outside
that set, the function that had them masked: nearer the truth than a
fifth of the profile on one unlock.

Usage: cpu_profile.py OUT_DIR NAME... (OUT_DIR/NAME.script, OUT_DIR/NAME.info)
Writes OUT_DIR/profile.txt (what it prints) and OUT_DIR/profile.json.
"""
import json
import re
import sys
from collections import Counter

IRQ_ENABLE = re.compile(
    r"^(pvm_irq_enable|__raw_callee_save_pvm_irq_enable|_raw_spin_unlock_irqrestore"
    r"|_raw_spin_unlock_irq|_raw_spin_unlock_bh|__local_bh_enable_ip|local_bh_enable"
    r"|arch_local_irq_enable|native_irq_enable|__irq_exit_rcu|irq_exit_rcu"
    r"|sysvec_\w+|asm_sysvec_\w+|handle_softirqs|do_softirq(\.part\.\d+)?)$")

# (kind, pattern over the function name); first match wins.
KINDS = [
    ("idle", r"halt|^default_idle|^do_idle|^cpu_idle|^cpuidle|^acpi_idle|^intel_idle"),
    ("eBPF programs", r"^bpf_prog_"),
    ("eBPF maps and helpers", r"htab|lookup_nulls_elem|^bpf_|^__bpf_|percpu_array|array_map"),
    ("clock reads", r"pvclock|kvm_clock|^ktime_|read_tsc|clocksource"),
    ("copies to and from user", r"copy_(to|from)_iter|copy_user|copy_folio|__check_object_size"
     r"|__virt_addr_valid|check_heap_object|rep_movs|^memcpy|skb_copy_datagram|__skb_datagram_iter"
     r"|simple_copy_to_iter"),
    ("checksums", r"csum|checksum"),
    ("bridge and netfilter", r"^br_|^__br_|^nbp_|^fdb_|^nf_|^ip_sabotage|^ipt_|^nft_"),
    ("routing and neighbours", r"^fib_|^__fib_|^ip_route|^__ip_route|^rt_|^ipv4_|^__mkroute|^dst_"
     r"|^neigh_|^__neigh|^ip6_route|^ip6_pol|^fib6_|^find_match|^__ipv4_neigh"),
    ("vxlan and UDP tunnel", r"vxlan|^udp_tunnel|^iptunnel|^ip_tunnel|^gro_cell|metadata_dst"
     r"|^udp_tun|^skb_tunnel|^__iptunnel"),
    ("GRO and GSO", r"gro|gso|segment"),
    ("TCP", r"^tcp|^__tcp|^inet_|^__inet|^sk_stream|^tcp_v4"),
    ("UDP and IP", r"^udp|^__udp|^ip_|^__ip_|^ipv6_|^ip6_|^raw_"),
    ("veth, redirect and device queues", r"^veth|^__dev_|^dev_|^netif_|^__netif|^process_backlog"
     r"|^napi|^__napi|^net_rx_action|^enqueue_to_backlog|^skb_do_redirect|^validate_xmit"
     r"|^sch_|^qdisc|^tcx_|^tcf_|^cls_bpf|^eth_|^skb_(push|pull|put)"),
    ("sockets and syscalls", r"^sock_|^sk_|^__sk_|^lock_sock|^release_sock|^__release_sock"
     r"|^do_syscall|^entry_|^syscall_|^__x64_sys|^__sys_|^ksys_|^vfs_|^fdget|^__fdget|^fput"
     r"|select|poll|^__fsnotify|^rw_verify|^security_|^aa_|^apparmor"),
    ("memory: skbs, slabs, pages, RCU", r"kmem_cache|kmalloc|kfree|^__alloc|alloc_skb|skb_release"
     r"|skb_clone|skb_free|__slab|slab_|page|^get_netmem|netmem|^rcu_|rcu_do_batch|defer_free"
     r"|skb_attempt|kfree_skb|consume_skb|__build_skb|^memset|memcg|^mod_|refill"),
    ("locks", r"spin|queued_|mutex|rwsem|_lock$|_unlock$"),
    ("scheduler and wake-ups", r"sched|wake|task|^update_|^enqueue_|^dequeue_|^pick_|^switch_"
     r"|^finish_|^__switch|^psi_|^cpuacct|^account_|^hrtimer|^tick_|^timer|^__run_timer"),
]
KINDS = [(k, re.compile(p)) for k, p in KINDS]
USER = "user space (iperf3, libc)"


def kind_of(fn):
    for k, pat in KINDS:
        if pat.search(fn):
            return k
    return "other kernel"


def owner(frames):
    """The function a sample is charged to (see Attribution)."""
    for addr, fn in frames:
        if addr < 0xffff800000000000:
            return USER
        if not IRQ_ENABLE.match(fn):
            return fn
    return frames[0][1] if frames else "?"


def parse(path):
    """Counter of owning function -> samples, from `perf script -F comm,ip,sym`."""
    counts = Counter()
    frames = []
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith((" ", "\t")) and line.strip():
                parts = line.split(None, 1)
                try:
                    addr = int(parts[0], 16)
                except ValueError:
                    continue
                fn = parts[1].strip() if len(parts) > 1 else "[unknown]"
                frames.append((addr, fn.split("+")[0]))
            else:
                if frames:
                    counts[owner(frames)] += 1
                frames = []
    if frames:
        counts[owner(frames)] += 1
    return counts


def load(out, name):
    info = dict(kv.split("=", 1) for kv in open(f"{out}/{name}.info").read().split())
    counts = parse(f"{out}/{name}.script")
    gbps, secs, freq = float(info["gbps"]), float(info["seconds"]), float(info["freq"])
    kb = gbps * 1e9 / 8 * secs / 1024
    # one sample = 1/freq s of one CPU; per KB moved in the recorded window
    scale = (1e6 / freq) / kb if kb > 0 else 0.0
    by_fn = {fn: n * scale for fn, n in counts.items()}
    by_kind = Counter()
    for fn, us in by_fn.items():
        by_kind[USER if fn == USER else kind_of(fn)] += us
    busy = sum(us for k, us in by_kind.items() if k != "idle")
    return {"name": name, "gbps": gbps, "seconds": secs, "samples": sum(counts.values()),
            "busy_us_per_kb": busy, "by_kind": dict(by_kind), "by_fn": by_fn}


def table(profiles, top):
    ref = profiles[0]
    lines = []
    head = f"{'':38}" + "".join(f"{p['name'][:18]:>20}" for p in profiles)
    lines.append("CPU us per KB moved (whole machine), by kind of work; +/- against " + ref["name"])
    lines.append(head)
    lines.append(f"{'Gbit/s in the recorded window':38}" + "".join(f"{p['gbps']:>20.2f}" for p in profiles))
    lines.append(f"{'busy (all but idle)':38}" + "".join(cell(p['busy_us_per_kb'], ref['busy_us_per_kb'], p is ref)
                                                       for p in profiles))
    kinds = sorted({k for p in profiles for k in p["by_kind"] if k != "idle"},
                   key=lambda k: -max(p["by_kind"].get(k, 0) for p in profiles))
    for k in kinds:
        lines.append(f"{k[:37]:38}" + "".join(cell(p['by_kind'].get(k, 0), ref['by_kind'].get(k, 0), p is ref)
                                              for p in profiles))
    for p in profiles[1:]:
        fns = {f for f in set(p["by_fn"]) | set(ref["by_fn"]) if kind_of(f) != "idle"}
        diff = sorted(fns, key=lambda f: -(p["by_fn"].get(f, 0) - ref["by_fn"].get(f, 0)))
        lines.append("")
        lines.append(f"Functions {p['name']} spends more on than {ref['name']} (us per KB, x1000):")
        for f in diff[:top]:
            d = p["by_fn"].get(f, 0) - ref["by_fn"].get(f, 0)
            if d <= 0:
                break
            lines.append(f"  {d * 1000:+8.1f}  {f}  ({kind_of(f) if f != USER else USER})")
        lines.append(f"... and less on:")
        for f in reversed(diff[-top:]):
            d = p["by_fn"].get(f, 0) - ref["by_fn"].get(f, 0)
            if d >= 0:
                break
            lines.append(f"  {d * 1000:+8.1f}  {f}  ({kind_of(f) if f != USER else USER})")
    return "\n".join(lines)


def cell(v, ref, is_ref):
    return f"{v:>20.4f}" if is_ref else f"{v:>11.4f} ({v - ref:+.4f})"


def main():
    if len(sys.argv) < 3:
        sys.exit(next(p for p in __doc__.split("\n\n") if p.startswith("Usage")))
    out, names = sys.argv[1], sys.argv[2:]
    profiles = [load(out, n) for n in names]
    text = table(profiles, 15)
    print(text)
    open(f"{out}/profile.txt", "w").write(text + "\n")
    json.dump([{k: v for k, v in p.items() if k != "by_fn"} |
               {"top_fns": dict(sorted(p["by_fn"].items(), key=lambda kv: -kv[1])[:60])}
               for p in profiles], open(f"{out}/profile.json", "w"), indent=1)


if __name__ == "__main__":
    main()

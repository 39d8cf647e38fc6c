#!/usr/bin/python3
"""bench/vxbench/cpu_profile.py over crafted `perf script -F comm,ip,sym` text:
which function a sample is charged to (the irq-enable rule, user space),
the kinds, and the arithmetic of CPU microseconds per KB.  The recording
itself (perf, the rig) is exercised by running `vxbench profile`."""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "vxbench"))
import cpu_profile as prof  # noqa: E402

K = "ffffffff8100{:04x}"


def sample(comm, *frames):
    """frames: leaf first; a name with 'user:' is a user-space frame."""
    out = [f"{comm} "]
    for i, fn in enumerate(frames):
        if fn.startswith("user:"):
            out.append(f"\t    7f00000{i:04x} {fn[5:]}")
        else:
            out.append(f"\t{K.format(i)} {fn}+0x1{i}")
    return "\n".join(out) + "\n\n"


def write(d, name, text, gbps, secs, freq):
    open(os.path.join(d, name + ".script"), "w").write(text)
    open(os.path.join(d, name + ".info"), "w").write(f"gbps={gbps} seconds={secs} freq={freq}\n")


def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}")


def main():
    with tempfile.TemporaryDirectory() as d:
        ref = (sample("iperf3", "_copy_to_iter", "tcp_recvmsg") * 6 +
               sample("iperf3", "pvm_irq_enable", "_raw_spin_unlock_irqrestore", "br_handle_frame") * 2 +
               sample("swapper", "pvm_safe_halt_hc", "default_idle") * 8 +
               sample("iperf3", "user:read", "user:main"))
        write(d, "a", ref, 8.0, 1, 1000)
        other = (sample("iperf3", "_copy_to_iter", "tcp_recvmsg") * 6 +
                 sample("iperf3", "lookup_nulls_elem_raw", "bpf_prog_abc_vxdp_tun_ingress") * 3 +
                 sample("iperf3", "__raw_callee_save_pvm_irq_enable", "pvm_irq_enable") +
                 sample("swapper", "pvm_safe_halt_hc", "default_idle") * 4)
        write(d, "b", other, 4.0, 1, 1000)
        a, b = prof.load(d, "a"), prof.load(d, "b")

        check(a["samples"] == 17 and b["samples"] == 14, f"sample counts {a['samples']} {b['samples']}")
        # 8 Gbit/s for 1 s = 976562.5 KB; a sample = 1000 us of one CPU
        kb = 8e9 / 8 / 1024
        check(abs(a["by_fn"]["_copy_to_iter"] - 6 * 1000 / kb) < 1e-9, "us per KB of a function")
        check("pvm_irq_enable" not in a["by_fn"] and "_raw_spin_unlock_irqrestore" not in a["by_fn"],
              "a sample on an irq-enable is charged to the caller that masked interrupts")
        check(abs(a["by_fn"]["br_handle_frame"] - 2 * 1000 / kb) < 1e-9, "br_handle_frame owns the two")
        check(a["by_kind"]["bridge and netfilter"] > 0, "bridge kind")
        check(a["by_fn"][prof.USER] > 0, "a user-space leaf is user space")
        check(abs(a["busy_us_per_kb"] - 9 * 1000 / kb) < 1e-9, "busy leaves idle out (9 busy samples)")
        # the same work at half the rate costs twice as much per KB
        check(abs(b["by_fn"]["_copy_to_iter"] - 2 * a["by_fn"]["_copy_to_iter"]) < 1e-9, "per KB scales with rate")
        check(b["by_kind"]["eBPF maps and helpers"] > 0, "htab lookups are eBPF maps")
        # a stack of nothing but irq-enable frames keeps its leaf
        check("__raw_callee_save_pvm_irq_enable" in b["by_fn"], "an all-irq-enable stack keeps its leaf")

        text = prof.table([a, b], 5)
        check("lookup_nulls_elem_raw" in text and "br_handle_frame" in text, "the table names the differences")
        check("(+" in text, "the table gives differences against the first datapath")
    print("ok: cpu_profile.py charges samples to functions and kinds, in CPU us per KB")


if __name__ == "__main__":
    main()

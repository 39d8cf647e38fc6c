#!/bin/bash
# Golden frames: the parser's flow key checked field by field against tshark.
#
#   tests/golden/check.sh BUILD_DIR        (make golden)
#
# For golden_plain.pcap and golden_vxlan.pcap (tests/data/, made by
# make_golden.py) tshark is the oracle: its decoding is normalised by
# tshark_to_key.py into the canonical lines that BUILD_DIR/tests/tools/golden_dump
# prints from flow_extract(), and the two are compared field by field.
# golden_malformed.pcap is checked against golden_malformed.expect (one drop
# reason per frame).  VXLAN and malformed frames are run twice: through
# flow_extract() on the whole frame, and (golden_dump -s) with every
# decapsulated frame parsed again by flow_extract_vxlan() from its VXLAN
# header, as the VXLAN port receives it.  Prints every mismatch as
#   golden_vxlan frame 12 (vxlan4_arp_reply): nw_proto: parser=1 tshark=2
# and exits 1 if there is any; 0 only when everything matches.
#
# GOLDEN_DATA=DIR reads the pcaps from DIR instead of tests/data.
set -u
set -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${1:?usage: $0 BUILD_DIR}
data=${GOLDEN_DATA:-$repo/tests/data}
dump=$build/tests/tools/golden_dump
python=/usr/bin/python3
[ -x "$python" ] || python=python3
normalise="$python $here/tshark_to_key.py"

die() { echo "golden: $*" >&2; exit 1; }
command -v tshark >/dev/null || die "tshark not found (scripts/install-deps.sh installs it)"
[ -x "$dump" ] || die "$dump not built (make all)"

tmp=$(mktemp -d /tmp/vx-golden.XXXXXX)
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT

# tshark as root in CI: it warns on stderr but runs; keep stderr for errors.
# Reassembly off so each fragment is decoded as it stands on the wire, as the
# parser sees it; UDP 4789 decoded as VXLAN explicitly.  Two passes: -T fields
# for the values, -T pdml for where each header starts (the pkt offsets).
tshark_prefs="-o ip.defragment:FALSE -o ipv6.defragment:FALSE -d udp.port==4789,vxlan"
tshark_fields() {
	local fields
	fields=$($normalise --fields | sed 's/^/-e /')
	# shellcheck disable=SC2086
	tshark -n -r "$1" $tshark_prefs -T fields -E separator=/t -E occurrence=a \
		-E aggregator='|' $fields 2>"$tmp/tshark.err"
}

# compare NAMES EXPECTED ACTUAL LABEL: field-by-field diff of canonical lines.
compare() {
	awk -v label="$4" '
	FILENAME == ARGV[1] { name[FNR] = $1; next }
	FILENAME == ARGV[2] { want[FNR] = $0; nwant = FNR; next }
	{
		n = FNR; got_line = $0
		if (n > nwant) { printf "%s frame %d: parser printed an extra line: %s\n", label, n, got_line; bad++; next }
		split(want[n], w, " "); split(got_line, g, " ")
		delete wv; delete gv; delete order; nf = 0
		for (i in w) { split(w[i], kv, "="); wv[kv[1]] = substr(w[i], length(kv[1]) + 2) }
		for (i = 1; i in w; i++) { split(w[i], kv, "="); order[++nf] = kv[1] }
		for (i in g) { split(g[i], kv, "="); gv[kv[1]] = substr(g[i], length(kv[1]) + 2) }
		where = sprintf("%s frame %d (%s)", label, n, name[n])
		if ("drop" in gv) { printf "%s: parser dropped it as %s, tshark decodes it\n", where, gv["drop"]; bad++; next }
		for (i = 1; i <= nf; i++) {
			f = order[i]
			if (!(f in gv)) { printf "%s: %s: parser printed nothing, tshark=%s\n", where, f, wv[f]; bad++ }
			else if (gv[f] != wv[f]) { printf "%s: %s: parser=%s tshark=%s\n", where, f, gv[f], wv[f]; bad++ }
		}
	}
	END {
		if (FNR < nwant) { printf "%s: parser printed %d lines, tshark %d\n", label, FNR, nwant; bad++ }
		exit bad > 0
	}' "$1" "$2" "$3"
}

failed=0

for set in golden_plain golden_vxlan; do
	pcap=$data/$set.pcap
	[ -r "$pcap" ] || die "$pcap missing (tests/data/make_golden.py makes it)"
	if ! tshark_fields "$pcap" > "$tmp/$set.tshark"; then
		cat "$tmp/tshark.err" >&2
		die "tshark failed on $pcap"
	fi
	# shellcheck disable=SC2086
	tshark -n -r "$pcap" $tshark_prefs -T pdml > "$tmp/$set.pdml" 2>"$tmp/tshark.err" \
		|| die "tshark -T pdml failed on $pcap: $(cat "$tmp/tshark.err")"
	$normalise --pdml "$tmp/$set.pdml" < "$tmp/$set.tshark" > "$tmp/$set.want" \
		|| die "normalising tshark output of $set failed"
	[ -s "$tmp/$set.want" ] || die "tshark decoded no frames in $pcap"
	"$dump" "$pcap" > "$tmp/$set.got" || die "golden_dump failed on $pcap"
	names=$data/$set.names
	[ -r "$names" ] || names=/dev/null
	# The comparator must be able to fail: feed it a copy of tshark's view
	# with one field changed and insist that it notices.
	sed '1s/ dl_type=0x\([0-9a-f]*\)/ dl_type=0xdead/' "$tmp/$set.want" > "$tmp/$set.mutant"
	if compare "$names" "$tmp/$set.mutant" "$tmp/$set.want" self-test >/dev/null; then
		die "comparator self-test: a changed field went unnoticed"
	fi
	if compare "$names" "$tmp/$set.want" "$tmp/$set.got" "$set"; then
		echo "golden: $set: $(wc -l < "$tmp/$set.got") frames match tshark"
	else
		failed=1
	fi
	[ "$set" = golden_vxlan ] || continue
	"$dump" -s "$pcap" > "$tmp/$set.sock" || die "golden_dump -s failed on $pcap"
	if compare "$names" "$tmp/$set.want" "$tmp/$set.sock" "$set(-s)"; then
		echo "golden: $set: $(grep -c ' tun=[46]' "$tmp/$set.sock") decapsulated frames match via flow_extract_vxlan too"
	else
		failed=1
	fi
done

# Malformed frames: one drop reason per frame, in order.
set=golden_malformed
sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$data/$set.expect" > "$tmp/$set.want"
for mode in "" -s; do
	# shellcheck disable=SC2086
	"$dump" $mode "$data/$set.pcap" > "$tmp/$set.got" || die "golden_dump $mode failed on $set.pcap"
	awk -v expect="$data/$set.expect" -v label="$set${mode:+($mode)}" '
	FILENAME == ARGV[1] { want[FNR] = $1; nwant = FNR; next }
	{
		got = "(accepted)"
		for (i = 2; i <= NF; i++) if ($i ~ /^drop=/) got = substr($i, 6)
		if (FNR > nwant) { printf "%s frame %d: not in %s (parser: %s)\n", label, FNR, expect, got; bad++; next }
		if (got != want[FNR]) {
			note = ""
			while ((getline line < expect) > 0) if (line !~ /^#/ && line ~ /[^ \t]/ && ++seen == FNR) { note = line; break }
			close(expect); seen = 0
			printf "%s frame %d: parser=%s expected=%s   [%s]\n", label, FNR, got, want[FNR], note
			bad++
		}
	}
	END {
		if (FNR != nwant) { printf "%s: %d frames, %d expectations\n", label, FNR, nwant; bad++ }
		exit bad > 0
	}' "$tmp/$set.want" "$tmp/$set.got" \
	&& echo "golden: $set${mode:+($mode)}: $(wc -l < "$tmp/$set.got") frames dropped for the expected reasons" \
	|| failed=1
done

if [ "$failed" -ne 0 ]; then
	echo "golden: FAILED" >&2
	exit 1
fi
echo "golden: OK"

#!/usr/bin/env bash
# The counterexample pictures: --trace writes Chrome trace-event JSON; --html writes a
# self-contained page that headless Chromium loads without errors, that shows the failing
# step, and whose screenshot holds the red failing-step marker.
set -u
MBCHECK=${1:?usage: html_test.sh path/to/mbcheck}
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || { echo "FAIL: chromium is not installed (scripts/setup-deps.sh installs it)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
chrome() {
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$tmp/profile" --window-size=1400,700 "$@"
}

"$MBCHECK" check epi-load --tiles 3 --threads-per-warp 8 --mutation tx-undercount-split \
  --html "$tmp/cex.html" --trace "$tmp/cex.json" >"$tmp/out" 2>&1
[ $? -eq 1 ] || fail "check on a buggy shape should exit 1"

python3 - "$tmp/cex.json" <<'PY' || exit 1
import json, sys
doc = json.load(open(sys.argv[1]))
events = doc["traceEvents"]
assert any(e["ph"] == "X" for e in events), "no step slices"
assert any(e["ph"] == "M" and e["name"] == "thread_name" for e in events), "no thread names"
assert doc["otherData"]["verdict"] == "race", doc["otherData"]
print("ok:   --trace is Chrome trace-event JSON with", len(events), "events")
PY

grep -q "<script" "$tmp/cex.html" && ! grep -qE 'src="https?:|href="https?:' "$tmp/cex.html" \
  || fail "the page must be self-contained"

chrome --dump-dom "file://$tmp/cex.html" >"$tmp/dom.html" 2>"$tmp/dom.err" || fail "chromium could not load the page"
for marker in 'data-rendered="yes"' 'id="failing-step"' 'id="failing-row"' 'copy #1 (from thread 0)' 'C stage 0' '(smem+0x900)' 'class="collapsed"' 'warp 2 (8 threads)'; do
  grep -qF "$marker" "$tmp/dom.html" || fail "the rendered page lacks $marker"
done
echo "ok:   the page renders and shows the failing step"

chrome --enable-logging=stderr --v=0 --dump-dom "file://$tmp/cex.html" >/dev/null 2>"$tmp/console.err"
if grep -E "Uncaught|SyntaxError|TypeError|ReferenceError" "$tmp/console.err"; then fail "JavaScript errors on the page"; fi
echo "ok:   no JavaScript errors"

chrome --screenshot="$tmp/shot.png" "file://$tmp/cex.html" >/dev/null 2>&1
cat >"$tmp/count_red.py" <<'PY'
# A small PNG reader (8-bit RGB/RGBA, all five filters): count the failing-step red.
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, width = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        width, height, depth, color = struct.unpack(">IIBB", body[:10])
        assert depth == 8 and color in (2, 6), (depth, color)
        bpp = 3 if color == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw, stride = zlib.decompress(idat), width * bpp
prev, red, i = bytearray(stride), 0, 0
for y in range(height):
    f, row = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = row[x - bpp] if x >= bpp else 0
        b, c = prev[x], prev[x - bpp] if x >= bpp else 0
        if f == 1: row[x] = (row[x] + a) & 255
        elif f == 2: row[x] = (row[x] + b) & 255
        elif f == 3: row[x] = (row[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            row[x] = (row[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    red += sum(1 for x in range(0, stride, bpp) if row[x] > 200 and row[x + 1] < 40 and row[x + 2] < 40)
    prev = row
assert red >= 20, f"the screenshot shows no failing-step marker ({red} red pixels)"
print(f"ok:   screenshot {width}x{height} shows the failing step ({red} red pixels)")
PY
python3 "$tmp/count_red.py" "$tmp/shot.png" || exit 1

# A long counterexample (its chart wider than the window): the page opens at the failing step
# (red in a 1400 px screenshot), its lanes are in launch order (warp 0, 1, 2, ...), and no
# barrier-state labels overlap as laid out.
"$MBCHECK" check epi-load --tiles 4 --mutation release-before-read \
  --html "$tmp/long.html" >"$tmp/out" 2>&1
[ $? -eq 1 ] || fail "check on the long buggy shape should exit 1"
chrome --dump-dom "file://$tmp/long.html" >"$tmp/long_dom.html" 2>/dev/null || fail "chromium could not load the long page"
python3 - "$tmp/long_dom.html" <<'PY' || exit 1
import re, sys
dom = open(sys.argv[1]).read()
width = int(re.search(r'<svg width="(\d+)"', dom).group(1))
assert width > 1400, f"the chart ({width} px) should be wider than the window for this check"
m = re.search(r'id="chart"[^>]*data-overlaps="(\d+)"', dom) or re.search(r'data-overlaps="(\d+)"[^>]*id="chart"', dom)
assert m and m.group(1) == "0", f"overlapping barrier-state labels: {m.group(1) if m else 'not measured'}"
warps = [int(w) for w in re.findall(r'class="lane-label"[^>]*>[+ ]*warp (\d+)<', dom)]
assert warps == sorted(warps) and len(warps) >= 2, f"lanes not in launch order: {warps}"
print(f"ok:   long page: {width} px chart, lanes {warps}, no overlapping labels")
PY
chrome --screenshot="$tmp/long.png" "file://$tmp/long.html" >/dev/null 2>&1
RED_MIN=20 python3 "$tmp/count_red.py" "$tmp/long.png" || fail "the long page does not open at the failing step"
echo "all HTML checks passed"

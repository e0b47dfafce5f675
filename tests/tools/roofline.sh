#!/bin/sh
# roofline.sh TILEC POINTS DIR: tilec report --roofline draws a well-formed SVG with one
# circle per point and one roof per compute peak; rendered to PNG where rsvg-convert is.
set -e
T=$1; P=$2; D=$3
mkdir -p "$D"
rm -f "$D/roofline.svg" "$D/roofline.png"
"$T" report --roofline "$D/roofline.svg" --gpu h100 "$P" >"$D/roofline.txt"
grep -Eq '^compute bound +1\.4e\+03 +466\.67 +333 +47\.2%$' "$D/roofline.txt" || { cat "$D/roofline.txt"; exit 1; }
python3 - "$D/roofline.svg" <<'PY'
import sys
import xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
points = root.findall(".//s:circle[@class='point']", ns)
roofs = root.findall(".//s:polyline[@class='roof']", ns)
texts = "".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
assert len(points) == 4, len(points)
assert len(roofs) == 4, len(roofs)
assert "H100 SXM HBM 3350 GB/s" in texts and "beyond the axes <&>" in texts, texts
# every point inside the plot area (the off-axis one clamped onto its edge)
for c in points:
    x, y = float(c.get("cx")), float(c.get("cy"))
    assert 90 <= x <= 710 and 50 <= y <= 530, (x, y)
PY
if command -v rsvg-convert >/dev/null; then
    rsvg-convert "$D/roofline.svg" -o "$D/roofline.png"
    [ -s "$D/roofline.png" ]
fi

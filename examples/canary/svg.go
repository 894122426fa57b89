package main

import (
	"fmt"
	"math"
	"strings"
)

// svgChart draws each scenario's share over time as a step line: time on x, the share on
// a log-like y axis (log10(1+share), so 1% and 5% show beside 100%).
func svgChart(results []result) string {
	const (
		w, h         = 760, 320
		left, right  = 60, 120
		top, bottom  = 30, 40
		plotW, plotH = w - left - right, h - top - bottom
	)
	secs := 1
	for _, r := range results {
		secs = max(secs, len(r.shares))
	}
	x := func(s int) float64 { return left + float64(s)*plotW/float64(secs) }
	y := func(share float64) float64 { return top + plotH - math.Log10(1+share)/math.Log10(101)*plotH }
	colors := []string{"#2a7", "#d33", "#e90"}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="14">Canary share of users over virtual time (translate.Ramp: 1 → 5 → 20 → 100%%)</text>`+"\n", left)
	for _, tick := range []float64{0, 1, 5, 20, 100} {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, left+plotW, y(tick), y(tick))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%g%%</text>`+"\n", left-6, y(tick)+4, tick)
	}
	step := max(10, (secs/8+9)/10*10)
	for s := 0; s <= secs; s += step {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%ds</text>`+"\n", x(s), top+plotH+18, s)
	}
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/>`+"\n", left, left+plotW, top+plotH, top+plotH)
	for i, r := range results {
		var pts []string
		prev := math.NaN()
		for s, share := range r.shares {
			if share != prev && !math.IsNaN(prev) {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(s), y(prev)))
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(s), y(share)))
			prev = share
		}
		c := colors[i%len(colors)]
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", c, strings.Join(pts, " "))
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="%s">%s: %s</text>`+"\n", left+plotW+8, top+16+18*i, c, r.name, r.verdict())
	}
	b.WriteString("</svg>\n")
	return b.String()
}

package eval

import (
	"fmt"
	"html"
	"io"
	"slices"
	"strings"
)

// palette colours the engines of a chart, in order (the Okabe-Ito colours, kind to
// colour-blind readers); the ninth engine takes the first colour again.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"}

// WriteSVG draws the metric of every engine on every pair (over all scenes) as a grouped
// bar chart: one group of bars per pair, one bar per engine, on a 0..100 axis, with a
// legend. It writes a complete SVG document.
func (r *Report) WriteSVG(w io.Writer, m Metric) error {
	var pairs []string
	for _, s := range r.Scores {
		if s.Scene == AllScenes && !slices.Contains(pairs, s.Pair) {
			pairs = append(pairs, s.Pair)
		}
	}
	const left, top, plotH, barW, gap, bottom = 60, 50, 300, 28, 36, 60
	groupW := max(len(r.Engines), 1)*barW + gap
	width := left + max(len(pairs), 1)*groupW + 20 + 160
	height := top + plotH + bottom
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="16" font-weight="bold">%s by engine and language pair</text>`+"\n", left, metricTitle(m))
	y := func(v float64) float64 { return top + plotH - v/100*plotH }
	for v := 0; v <= 100; v += 20 {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, left+len(pairs)*groupW, y(float64(v)), y(float64(v)))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%d</text>`+"\n", left-6, y(float64(v))+4, v)
	}
	for pi, p := range pairs {
		x0 := left + pi*groupW + gap/2
		for ei, e := range r.Engines {
			s, ok := r.Find(e, p, AllScenes)
			v, measured := m.of(s)
			if !ok || !measured || s.Items == s.Errors {
				continue
			}
			x := x0 + ei*barW
			fmt.Fprintf(&b, `<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="%s"><title>%s %s: %.2f</title></rect>`+"\n",
				x+2, y(v), barW-4, plotH*v/100, palette[ei%len(palette)], esc(e), esc(p), v)
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="middle" font-size="10">%.0f</text>`+"\n", x+barW/2, y(v)-3, v)
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", x0+len(r.Engines)*barW/2, top+plotH+20, esc(p))
	}
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="black"/>`+"\n", left, left+len(pairs)*groupW, top+plotH, top+plotH)
	lx := left + len(pairs)*groupW + 20
	for ei, e := range r.Engines {
		ly := top + ei*20
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/>`+"\n", lx, ly, palette[ei%len(palette)])
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", lx+18, ly+11, esc(e))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func metricTitle(m Metric) string {
	switch m {
	case MetricBLEU:
		return "BLEU"
	case MetricJudge:
		return "Judge score"
	}
	return "chrF2"
}

func esc(s string) string { return html.EscapeString(s) }

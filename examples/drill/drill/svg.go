package drill

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
	"time"

	"github.com/fanyi-go/translate"
)

// Chart geometry, in SVG user units.
const (
	chartW    = 1000
	plotL     = 70  // left edge of the plot
	plotR     = 900 // right edge; the p99 axis is drawn here
	plotT     = 80  // top edge
	plotB     = 400 // bottom edge
	laneTop   = 462 // first breaker lane
	laneH     = 18
	legendGap = 30
)

// WriteSVG draws a report as an SVG chart, so that a person can see the failover:
//
//   - each engine's share of the engine calls started in short bins (a line per engine,
//     left axis);
//   - p99 latency of the requests started each second (a black step line, right axis);
//   - the moment of the fault (a red dashed line);
//   - every stretch of time a breaker was open, shaded in the engine's colour across the
//     plot and drawn in a lane per engine below it (half-open stretches are darker);
//   - in SlowEngine and ServerErrors, the verdict's windows: the baseline p99, the p99 of
//     the requests started once the breaker opened, and its limit;
//   - when requests failed, their share (a red area, left axis), and with a budget the share
//     of it spent (a brown dashed line, left axis).
func WriteSVG(w io.Writer, r *Report) error {
	c := newChart(w, r)
	c.header()
	c.breakerShading()
	c.axes()
	c.shares()
	c.failedArea()
	c.budgetLine()
	c.p99Line()
	c.p99Verdict()
	c.fault()
	c.lanes()
	c.legend()
	c.ew.printf("</svg>\n")
	return c.ew.err
}

// chart is one SVG being drawn: the report, its time span and the data every part of the
// drawing shares. Its methods draw the parts in order, back to front.
type chart struct {
	ew        *errWriter
	r         *Report
	span      time.Duration // the time axis: the run, or until the interruption
	seconds   []Bucket      // one-second buckets: p99 steps
	bins      []Bucket      // short buckets: traffic shares, failures and budget
	intervals []Interval    // breaker stretches
	win       p99Windows    // the verdict's windows, when showLimit
	showLimit bool          // draw the verdict's p99 windows
	topMS     float64       // the top of the latency axis, in ms
	failures  int           // failed requests
}

// newChart measures a report for drawing: the span of the time axis, the top of the
// latency axis and the buckets.
func newChart(w io.Writer, r *Report) *chart {
	c := &chart{ew: &errWriter{w: w}, r: r, span: r.Config.Duration}
	if r.Interrupted {
		c.span = r.End
	}
	if c.span <= 0 {
		c.span = time.Second
	}
	c.seconds = r.Buckets(time.Second)
	c.showLimit = (r.Config.Scenario == SlowEngine || r.Config.Scenario == ServerErrors) && r.Target != ""
	if c.showLimit {
		c.win = r.p99Windows()
		c.showLimit = c.win.opened
	}
	top := 100 * time.Millisecond
	for _, b := range c.seconds {
		top = max(top, b.P99)
		c.failures += b.Failed
	}
	if c.showLimit {
		top = max(top, c.win.baseP99+MaxP99Rise, c.win.afterP99)
	}
	c.topMS = niceCeil(float64(top.Milliseconds()))
	c.intervals = r.BreakerIntervals()
	c.bins = r.Buckets(max(250*time.Millisecond, c.span/40))
	return c
}

// x maps a time to the horizontal axis, clipped to the span.
func (c *chart) x(t time.Duration) float64 {
	t = min(max(t, 0), c.span)
	return plotL + float64(plotR-plotL)*t.Seconds()/c.span.Seconds()
}

// yShare maps a share (0 to 1) to the left axis.
func (c *chart) yShare(s float64) float64 { return plotB - float64(plotB-plotT)*s }

// yLat maps a latency to the right axis, clipped to its top.
func (c *chart) yLat(d time.Duration) float64 {
	return plotB - float64(plotB-plotT)*math.Min(1, float64(d.Milliseconds())/c.topMS)
}

// height is the height of the whole chart: the plot, a lane per engine and the legend.
func (c *chart) height() int { return laneTop + laneH*len(c.r.Engines) + legendGap + 30 }

// header opens the SVG and writes the title, the run's settings with the verdict, and a
// note on failed requests.
func (c *chart) header() {
	r, ew, height := c.r, c.ew, c.height()
	ew.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n",
		chartW, height, chartW, height)
	title := fmt.Sprintf("Scenario %d: %s", int(r.Config.Scenario), r.Config.Scenario.Title())
	ok, _ := Verdict(r)
	verdict := "PASS"
	if !ok {
		verdict = "FAIL"
	}
	sub := fmt.Sprintf("%g requests/s for %s; fault at %s on %s; verdict %s", r.Config.Rate, r.Config.Duration,
		secs(r.FaultAt), orNone(r.Target), verdict)
	ew.printf("<title>%s</title>\n", esc(title))
	ew.printf(`<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", chartW, height)
	ew.printf(`<text x="%d" y="28" font-size="17" font-weight="bold">%s</text>`+"\n", plotL, esc(title))
	ew.printf(`<text x="%d" y="48" font-size="13" fill="#444444">%s</text>`+"\n", plotL, esc(sub))
	if note := failureNote(r, ok); note != "" {
		ew.printf(`<text class="verdict-note" x="%d" y="66" font-size="12" fill="#8c564b">%s</text>`+"\n", plotL, esc(note))
	}
}

// breakerShading shades every stretch a breaker was open across the plot.
func (c *chart) breakerShading() {
	c.ew.printf(`<g id="breakers">` + "\n")
	for _, iv := range c.intervals {
		if iv.From >= c.span {
			continue
		}
		class, opacity := "breaker-open", 0.14
		if iv.State == translate.BreakerHalfOpen {
			class, opacity = "breaker-half-open", 0.4
		}
		x0, x1 := c.x(iv.From), c.x(iv.To)
		c.ew.printf(`<rect class="%s" data-engine="%s" x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" fill-opacity="%.2f"><title>%s</title></rect>`+"\n",
			class, esc(iv.Engine), x0, plotT, math.Max(1, x1-x0), plotB-plotT, c.r.color(iv.Engine), opacity,
			esc(fmt.Sprintf("%s breaker %s from %s to %s", iv.Engine, iv.State, secs(iv.From), secs(iv.To))))
	}
	c.ew.printf("</g>\n")
}

// shareTicks are the grid lines and labels of the left axis.
var shareTicks = []float64{0, 0.25, 0.5, 0.75, 1}

// axes draws the grid, the plot's frame and the labels of both axes and of time.
func (c *chart) axes() {
	ew, step := c.ew, tickStep(c.span)
	ew.printf(`<g id="axes" stroke="#dddddd">` + "\n")
	for _, s := range shareTicks {
		ew.printf(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>`+"\n", plotL, c.yShare(s), plotR, c.yShare(s))
	}
	for t := time.Duration(0); t <= c.span; t += step {
		ew.printf(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>`+"\n", c.x(t), plotT, c.x(t), plotB)
	}
	ew.printf("</g>\n")
	ew.printf(`<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888888"/>`+"\n", plotL, plotT, plotR-plotL, plotB-plotT)
	ew.printf(`<g id="labels" fill="#333333">` + "\n")
	for _, s := range shareTicks {
		ew.printf(`<text x="%d" y="%.1f" text-anchor="end">%.0f%%</text>`+"\n", plotL-6, c.yShare(s)+4, 100*s)
	}
	for k := 0; k <= 5; k++ {
		v := c.topMS * float64(k) / 5
		ew.printf(`<text x="%d" y="%.1f">%g ms</text>`+"\n", plotR+6, c.yLat(time.Duration(v*float64(time.Millisecond)))+4, v)
	}
	for t := time.Duration(0); t <= c.span; t += step {
		ew.printf(`<text x="%.1f" y="%d" text-anchor="middle">%gs</text>`+"\n", c.x(t), plotB+16, t.Seconds())
	}
	c.axisTitles()
	ew.printf("</g>\n")
}

// axisTitles names the left, right and time axes.
func (c *chart) axisTitles() {
	leftTitle := "traffic share (engine calls)"
	if c.r.Budget > 0 {
		leftTitle = "share of engine calls; % of the budget spent"
	}
	c.ew.printf(`<text x="%d" y="%d" text-anchor="middle" transform="rotate(-90 %d %d)">%s</text>`+"\n",
		18, (plotT+plotB)/2, 18, (plotT+plotB)/2, leftTitle)
	c.ew.printf(`<text x="%d" y="%d" text-anchor="middle" transform="rotate(90 %d %d)">p99 latency (right axis)</text>`+"\n",
		chartW-22, (plotT+plotB)/2, chartW-22, (plotT+plotB)/2)
	c.ew.printf(`<text x="%d" y="%d" text-anchor="middle">time since start</text>`+"\n", (plotL+plotR)/2, plotB+32)
}

// shares draws each engine's share of the engine calls, in short bins so that the failover
// shows as a drop. A bin without calls breaks the line.
func (c *chart) shares() {
	c.ew.printf(`<g id="shares" fill="none" stroke-width="2" stroke-linejoin="round">` + "\n")
	for i, e := range c.r.Engines {
		var d strings.Builder
		move := true
		for _, b := range c.bins {
			s, ok := b.Share(i)
			if !ok {
				move = true
				continue
			}
			fmt.Fprintf(&d, "%s%.1f %.1f ", pathCmd(&move), c.x(b.Start+b.Width/2), c.yShare(s))
		}
		c.ew.printf(`<path class="share" data-engine="%s" stroke="%s" d="%s"/>`+"\n", esc(e.Name), e.Color, strings.TrimSpace(d.String()))
	}
	c.ew.printf("</g>\n")
}

// pathCmd returns the path command for the next point of a line: "M" after a break (and
// clears it), "L" otherwise.
func pathCmd(move *bool) string {
	if *move {
		*move = false
		return "M"
	}
	return "L"
}

// failedArea draws the share of failed requests per bin as a red area on the left axis,
// when any failed.
func (c *chart) failedArea() {
	if c.failures == 0 {
		return
	}
	var d strings.Builder
	fmt.Fprintf(&d, "M%.1f %d ", c.x(0), plotB)
	for _, b := range c.bins {
		f := 0.0
		if b.Requests > 0 {
			f = float64(b.Failed) / float64(b.Requests)
		}
		fmt.Fprintf(&d, "L%.1f %.1f L%.1f %.1f ", c.x(b.Start), c.yShare(f), c.x(b.Start+b.Width), c.yShare(f))
	}
	fmt.Fprintf(&d, "L%.1f %d Z", c.x(c.span), plotB)
	c.ew.printf(`<path class="failed" fill="#d62728" fill-opacity="0.25" stroke="none" d="%s"/>`+"\n", d.String())
}

// budgetLine draws, with a budget, the share of it spent against the left axis: 100% is
// the top of the plot. The label at its end says so, since the right axis beside it is
// latency.
func (c *chart) budgetLine() {
	r := c.r
	if r.Budget <= 0 {
		return
	}
	var d strings.Builder
	fmt.Fprintf(&d, "M%.1f %d ", c.x(0), plotB)
	last := 0.0
	for _, b := range c.bins {
		last = math.Min(1, b.Spent/r.Budget)
		fmt.Fprintf(&d, "L%.1f %.1f ", c.x(b.Start+b.Width), c.yShare(last))
	}
	c.ew.printf(`<path class="budget" fill="none" stroke="#8c564b" stroke-width="2" stroke-dasharray="8 3" d="%s"/>`+"\n", strings.TrimSpace(d.String()))
	c.ew.printf(`<text class="budget-label" x="%.1f" y="%.1f" text-anchor="end" fill="#8c564b" font-size="11" %s>budget spent: %.0f%% of %.4g credits (left axis)</text>`+"\n",
		c.x(c.span)-4, c.yShare(last)+14, halo, 100*last, r.Budget)
}

// p99Line draws the p99 latency of the requests started each second as steps on the right
// axis. A second without requests breaks the line.
func (c *chart) p99Line() {
	var d strings.Builder
	move := true
	for _, b := range c.seconds {
		if b.Requests == 0 {
			move = true
			continue
		}
		fmt.Fprintf(&d, "%s%.1f %.1f H%.1f ", pathCmd(&move), c.x(b.Start), c.yLat(b.P99), c.x(b.Start+b.Width))
	}
	c.ew.printf(`<path class="p99" fill="none" stroke="#111111" stroke-width="1.5" d="%s"/>`+"\n", strings.TrimSpace(d.String()))
}

// p99Verdict draws the verdict's windows of SlowEngine and ServerErrors: the baseline p99
// before the fault, the p99 of the requests started once the breaker had opened, and its
// limit.
func (c *chart) p99Verdict() {
	if !c.showLimit {
		return
	}
	ew, win, x, yLat := c.ew, c.win, c.x, c.yLat
	lim := win.baseP99 + MaxP99Rise
	ew.printf(`<g id="p99-verdict" font-size="11">` + "\n")
	ew.printf(`<line class="p99-baseline" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#555555" stroke-width="2.5" stroke-dasharray="2 3"/>`+"\n",
		x(0), yLat(win.baseP99), x(c.r.FaultAt), yLat(win.baseP99))
	ew.printf(`<text x="%.1f" y="%.1f" %s>baseline p99 %s</text>`+"\n", x(0)+4, yLat(win.baseP99)+14, halo, ms(win.baseP99))
	ew.printf(`<line class="p99-limit" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#d62728" stroke-width="1.5" stroke-dasharray="5 3"/>`+"\n",
		x(win.open), yLat(lim), x(c.span), yLat(lim))
	ew.printf(`<text x="%.1f" y="%.1f" text-anchor="end" fill="#d62728" %s>limit: baseline p99 + %d ms</text>`+"\n",
		x(c.span)-4, yLat(lim)-5, halo, MaxP99Rise.Milliseconds())
	ew.printf(`<line class="p99-after" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#111111" stroke-width="2.5" stroke-dasharray="2 3"/>`+"\n",
		x(win.open), yLat(win.afterP99), x(c.span), yLat(win.afterP99))
	ew.printf(`<text x="%.1f" y="%.1f" %s>p99 once the breaker opened: %s</text>`+"\n", x(win.open)+4, yLat(win.afterP99)+14, halo, ms(win.afterP99))
	ew.printf("</g>\n")
}

// fault marks the moment of the fault with a red dashed line, when there was one.
func (c *chart) fault() {
	r := c.r
	if r.Target == "" {
		return
	}
	fx := c.x(r.FaultAt)
	c.ew.printf(`<line class="fault" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#d62728" stroke-width="1.5" stroke-dasharray="6 4"/>`+"\n",
		fx, plotT-6, fx, plotB)
	c.ew.printf(`<text x="%.1f" y="%d" fill="#d62728" %s>fault: %s</text>`+"\n", fx+4, plotT+14, halo, esc(r.Target+" "+faultWord(r.Config.Scenario)))
}

// lanes draws one lane per engine under the plot: its breaker's open and half-open
// stretches.
func (c *chart) lanes() {
	ew := c.ew
	ew.printf(`<g id="lanes">` + "\n")
	ew.printf(`<text x="%d" y="%d" fill="#333333">breakers (open: light, half-open: dark)</text>`+"\n", plotL, laneTop-6)
	for i, e := range c.r.Engines {
		y := laneTop + i*laneH
		ew.printf(`<text x="%d" y="%d" text-anchor="end" fill="%s">%s</text>`+"\n", plotL-6, y+laneH-5, e.Color, esc(e.Name))
		ew.printf(`<rect x="%d" y="%d" width="%d" height="%d" fill="#f4f4f4"/>`+"\n", plotL, y+2, plotR-plotL, laneH-4)
		for _, iv := range c.intervals {
			if iv.Engine != e.Name || iv.From >= c.span {
				continue
			}
			opacity := 0.45
			if iv.State == translate.BreakerHalfOpen {
				opacity = 1
			}
			x0, x1 := c.x(iv.From), c.x(iv.To)
			ew.printf(`<rect class="lane-%s" x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" fill-opacity="%.2f"/>`+"\n",
				strings.ReplaceAll(iv.State.String(), " ", "-"), x0, y+2, math.Max(1.5, x1-x0), laneH-4, e.Color, opacity)
		}
	}
	ew.printf("</g>\n")
}

// legend names the engines' colours and the other marks, left to right; the failure and
// budget entries only when the chart has them.
func (c *chart) legend() {
	ew := c.ew
	ly := laneTop + laneH*len(c.r.Engines) + legendGap
	ew.printf(`<g id="legend">` + "\n")
	lx := plotL
	for _, e := range c.r.Engines {
		ew.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>`+"\n", lx, ly-4, lx+22, ly-4, e.Color)
		ew.printf(`<text x="%d" y="%d">%s</text>`+"\n", lx+28, ly, esc(e.Name))
		lx += 85
	}
	ew.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#111111" stroke-width="1.5"/>`+"\n", lx, ly-4, lx+22, ly-4)
	ew.printf(`<text x="%d" y="%d">p99 per second</text>`+"\n", lx+28, ly)
	lx += 130
	ew.printf(`<rect x="%d" y="%d" width="22" height="12" fill="#1f77b4" fill-opacity="0.14"/>`+"\n", lx, ly-10)
	ew.printf(`<text x="%d" y="%d">breaker open</text>`+"\n", lx+28, ly)
	lx += 115
	if c.failures > 0 {
		ew.printf(`<rect x="%d" y="%d" width="22" height="12" fill="#d62728" fill-opacity="0.25"/>`+"\n", lx, ly-10)
		ew.printf(`<text x="%d" y="%d">failed requests</text>`+"\n", lx+28, ly)
		lx += 125
	}
	if c.r.Budget > 0 {
		ew.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#8c564b" stroke-width="2" stroke-dasharray="8 3"/>`+"\n", lx, ly-4, lx+22, ly-4)
		ew.printf(`<text x="%d" y="%d">budget spent (left axis)</text>`+"\n", lx+28, ly)
	}
	ew.printf("</g>\n")
}

// failureNote explains failed requests under the title, so that a PASS beside them is not
// misread: in QuotaOut, requests refused for the budget are the expected outcome.
func failureNote(r *Report, ok bool) string {
	failed := failures(r.Requests)
	if len(failed) == 0 {
		return ""
	}
	budget := 0
	for _, q := range failed {
		if q.Err == translate.KindBudgetExceeded {
			budget++
		}
	}
	if r.Config.Scenario == QuotaOut && budget == len(failed) && ok {
		return fmt.Sprintf("%d of %d requests refused with budget_exceeded: expected (paid engines took the free engine's traffic until the budget ran out)",
			len(failed), len(r.Requests))
	}
	return fmt.Sprintf("%d of %d requests failed%s", len(failed), len(r.Requests), kinds(failed))
}

func (r *Report) color(engine string) string {
	if i := r.engineIndex(engine); i >= 0 {
		return r.Engines[i].Color
	}
	return "#888888"
}

func faultWord(s Scenario) string {
	switch s {
	case KillTop:
		return "killed"
	case SlowEngine:
		return "latency " + SlowLatency.String()
	case QuotaOut:
		return "quota 0"
	case ServerErrors:
		return fmt.Sprintf("%.0f%% 5xx", 100*ServerErrorRate)
	}
	return ""
}

// tickStep returns a tick spacing that puts at most about a dozen ticks on span.
func tickStep(span time.Duration) time.Duration {
	for _, s := range []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second,
		2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute} {
		if span/s <= 12 {
			return s
		}
	}
	return span / 10
}

// niceCeil rounds v up to 1, 2, 2.5 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func esc(s string) string { return html.EscapeString(s) }

// halo outlines text in white so that it stays legible over lines.
const halo = `stroke="#ffffff" stroke-width="3" stroke-opacity="0.85" paint-order="stroke"`

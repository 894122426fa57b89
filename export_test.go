package translate

import (
	"context"
	"time"
)

// WaitingForTest returns how many requests wait on a coalesced flight.
func WaitingForTest(c *Client) int { return c.flights.m.Waiting() }

// ManualProbesForTest wraps clk so that a Client built on it (WithClock) starts no
// background probe loop: the helpers' manual clock sleeps at once, so it cannot pace one.
// Tests run rounds with ProbeRoundForTest instead.
func ManualProbesForTest(clk Clock) Clock { return manualProbes{clk} }

type manualProbes struct{ Clock }

func (manualProbes) manualProbes() {}

// ProbeRoundForTest runs one probe round now and returns when it is done. It does nothing
// without WithProbes.
func ProbeRoundForTest(c *Client) { c.probeRound(context.Background()) }

// SetLatencyForTest sets an engine's recent (EWMA) latency as if folds had measured it, and
// rebuilds its view: tests of the latency rules need no real slow calls.
func SetLatencyForTest(c *Client, name string, d time.Duration) {
	e := c.cfg.Load().byName[name]
	nv := *e.view.Load()
	nv.ewma, nv.latSeen = d, true
	c.rebuildView(e, &nv)
	e.view.Store(&nv)
}

// SharesForTest returns each engine's share of req's traffic at the first stage of its plan
// (the pinned engine aside): its weight over the candidates' total.
func SharesForTest(c *Client, req Request) map[string]float64 {
	var r request
	now := c.now()
	if err := c.prepare(&req, &r, now); err != nil {
		panic(err)
	}
	p := planFor(&r)
	cands := c.filter(&r, &set{}, p.stages[0], now, nil)
	sum := 0.0
	for _, cd := range cands {
		sum += cd.w
	}
	out := map[string]float64{}
	for _, cd := range cands {
		out[r.s.engines[cd.i].name] = cd.w / sum
	}
	return out
}

// ReconfigureHoldForTest is how long requests that arrive during a Reconfigure wait for it
// at most.
const ReconfigureHoldForTest = reconfigureHold

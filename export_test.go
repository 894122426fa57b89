package translate

import "context"

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

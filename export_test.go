package translate

// WaitingForTest returns how many requests wait on a coalesced flight.
func WaitingForTest(c *Client) int { return int(c.flights.waiting.Load()) }

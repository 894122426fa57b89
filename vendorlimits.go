package translate

// heedLimits slows e when the vendor says its rate limits run low (EngineResult.Limits).
// (stub: owned by the runtime-configuration work)
func (c *Client) heedLimits(e *engine, l *VendorLimits, now int64) {}

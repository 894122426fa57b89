package translate

func (p *ProbePolicy) validate() error {
	switch {
	case p.Interval < 0:
		return configError("ProbePolicy.Interval", "must not be negative")
	case p.Failures < 0:
		return configError("ProbePolicy.Failures", "must not be negative")
	}
	return nil
}

func (c *Client) startProbes() {}

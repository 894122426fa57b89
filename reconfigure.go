package translate

// Reconfigure swaps the Client's configuration for cfg atomically, keeping the state of
// engines that stay. It is a stub until the lead's implementation lands.
func (c *Client) Reconfigure(cfg *Config) error {
	return &Error{Kind: KindInvalidInput, Message: "Reconfigure: not implemented yet"}
}
